import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionEvent } from "../../src/client/client.js";
import type { TestBrain } from "../helpers/brain.js";
import { runTurn } from "../helpers/turns.js";
import { type LocalTools, operator, startBrainFor, startLocalTools } from "./local-tools-process.js";

let tools: LocalTools;
let brain: TestBrain;

beforeAll(async () => {
  tools = await startLocalTools();
  brain = await startBrainFor(tools);
});
afterAll(async () => {
  await brain?.stop();
  await tools?.stop();
});

const QUESTION = "Migrate the database?";
const ask = { tool_calls: [{ name: "ask_approval", arguments: { question: QUESTION } }] };

it("keeps a pending approval across a restart; asking again collects the answer given meanwhile", async () => {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["ask_approval"],
    script: [ask, { text: "first turn: {{result}}" }, ask, { text: "second turn: {{result}}" }],
  });

  // turn 1: the question is out when the service restarts
  const events: SessionEvent[] = [];
  const stream = client.streamEvents(session.id, { signal: AbortSignal.timeout(15_000) });
  const first = stream.next();
  await client.sendMessage(session.id, "go");
  let approvalId: string | undefined;
  for (let next = await first; !next.done; next = await stream.next()) {
    events.push(next.value);
    const progress =
      next.value.type === "tool.progress" ? (next.value.data.data as { approval_id?: string }) : undefined;
    if (next.value.type === "tool.progress" && !approvalId) {
      approvalId = progress?.approval_id;
      await tools.restart();
    }
    if (next.value.type === "turn.completed" || next.value.type === "turn.failed") break;
  }
  await stream.return(undefined);
  const lost = events.find((event) => event.type === "tool.result");
  expect(lost?.data.is_error).toBe(true);
  expect(JSON.stringify(lost?.data.content)).toContain(`Approval ${approvalId} stays open`);

  // the new process still has the question; a person answers while no call waits
  const pending = (await operator(tools, "GET", "/operator/approvals")).json().approvals;
  expect(pending).toEqual([
    expect.objectContaining({ id: approvalId, question: QUESTION, status: "pending" }),
  ]);
  expect(
    (await operator(tools, "POST", `/operator/approvals/${approvalId}`, { body: { answer: "yes" } })).status,
  ).toBe(200);

  // turn 2: the model asks the same question again and gets that answer at once
  const second = await runTurn(client, session.id, "ask again");
  const result = second.find((event) => event.type === "tool.result");
  expect(result?.data).toMatchObject({
    is_error: false,
    content: [{ type: "text", text: "Operator answered yes." }],
    structured_content: { approval_id: approvalId, answer: "yes" },
  });
  expect(second.some((event) => event.type === "tool.progress")).toBe(false);

  // an answer is delivered once: the same question now is a new one
  const third = await client.createSession({ tools: ["ask_approval"], script: [ask, { text: "x" }] });
  void runTurn(client, third.id, "and again", 15_000).catch(() => {});
  await expect
    .poll(async () => (await operator(tools, "GET", "/operator/approvals")).json().approvals.length)
    .toBe(1);
  const fresh = (await operator(tools, "GET", "/operator/approvals")).json().approvals[0];
  expect(fresh.id).not.toBe(approvalId);
  await client.close(third.id);
});
