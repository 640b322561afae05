import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient, SessionEvent } from "../../src/client/client.js";
import type { TestBrain } from "../helpers/brain.js";
import {
  type LocalTools,
  operator,
  runLocalToolsCli as runCli,
  startBrainFor,
  startLocalTools,
} from "./local-tools-process.js";

let tools: LocalTools;
let brain: TestBrain;
let client: BrainClient;

beforeAll(async () => {
  tools = await startLocalTools();
  brain = await startBrainFor(tools);
  client = brain.client();
});
afterAll(async () => {
  await brain?.stop();
  await tools?.stop();
});

/**
 * Start a turn whose model asks `calls` times at once, and resolve with the approval ids (by call)
 * once Brain's SSE clients see every call waiting.
 */
async function askAndWait(question: string, extra: Record<string, unknown> = {}, calls = 1) {
  const ask = { name: "ask_approval", arguments: { question, ...extra } };
  const session = await client.createSession({
    tools: ["ask_approval"],
    script: [{ tool_calls: Array(calls).fill(ask) }, { text: "The tool said: {{result}}" }],
  });
  const events: SessionEvent[] = [];
  const waitingCalls = new Map<string, string>();
  let onWaiting: () => void = () => {};
  const waiting = new Promise<void>((resolve) => {
    onWaiting = resolve;
  });
  const turn = (async () => {
    const stream = client.streamEvents(session.id, { signal: AbortSignal.timeout(15_000) });
    const first = stream.next();
    await client.sendMessage(session.id, "please ask");
    for (let next = await first; !next.done; next = await stream.next()) {
      events.push(next.value);
      const data = next.value.data as { call_id?: string; data?: { status?: string; approval_id?: string } };
      if (next.value.type === "tool.progress" && data.data?.status === "waiting_for_operator") {
        waitingCalls.set(String(data.call_id), String(data.data.approval_id));
        if (waitingCalls.size === calls) onWaiting();
      }
      if (next.value.type.startsWith("turn.") && next.value.type !== "turn.started") break;
    }
    await stream.return(undefined);
    return events;
  })();
  await waiting;
  const approvalId = waitingCalls.values().next().value as string;
  return { session, approvalId, waitingCalls, events, turn };
}

const assistantText = (events: SessionEvent[]) =>
  events.filter((event) => event.type === "message.assistant").map((event) => event.data.text);

describe("ask_approval end to end", () => {
  it("waits for the operator's yes over HTTP, and the answer reaches the model", async () => {
    const { approvalId, turn } = await askAndWait("Deploy to production?");
    expect(approvalId).toMatch(/^apr_/);
    const listed = await operator(tools, "GET", "/operator/approvals");
    expect(listed.json().approvals).toEqual([
      expect.objectContaining({
        id: approvalId,
        question: "Deploy to production?",
        status: "pending",
        tenant_id: "acme",
      }),
    ]);
    const answered = await operator(tools, "POST", `/operator/approvals/${approvalId}`, {
      body: { answer: "yes", by: "ana" },
    });
    expect(answered.status).toBe(200);
    expect(answered.json()).toMatchObject({ id: approvalId, status: "yes", answered_by: "ana" });

    const events = await turn;
    const result = events.find((event) => event.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "Operator answered yes." }],
      structured_content: { approval_id: approvalId, answer: "yes" },
    });
    expect(assistantText(events)).toContain("The tool said: Operator answered yes.");
    expect(events.at(-1)?.type).toBe("turn.completed");
  });

  it("takes the answer no from the CLI", async () => {
    const { approvalId, turn } = await askAndWait("Delete the backups?");
    const env = { ...tools.env };
    const url = ["--config", tools.configPath, "--url", tools.url];
    const list = runCli(["approvals", ...url], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`${approvalId}  acme/`);
    expect(list.stdout).toContain('"Delete the backups?"');
    const answer = runCli(["answer", approvalId, "no", ...url], env);
    expect(answer).toMatchObject({ code: 0, stdout: `${approvalId}: answered no\n` });
    const again = await operator(tools, "POST", `/operator/approvals/${approvalId}`, {
      body: { answer: "yes" },
    });
    expect(again.status).toBe(409);
    expect(again.json().error).toEqual({
      code: "already_answered",
      message: `approval ${approvalId} was already answered no`,
    });
    const events = await turn;
    expect(assistantText(events)).toContain("The tool said: Operator answered no.");
  });

  it("answers with a timeout result when no one answers in time", async () => {
    const { turn } = await askAndWait("Anyone there?", { timeout_seconds: 0.5 });
    const events = await turn;
    const result = events.find((event) => event.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: false,
      content: [
        { type: "text", text: "No operator answered within 0.5 seconds. Treat this as not approved." },
      ],
      structured_content: { answer: "timeout" },
    });
  });

  it("asks two calls of one session with the same question as two approvals, each answer for one call", async () => {
    const { waitingCalls, events, turn } = await askAndWait("Scale down the cluster?", {}, 2);
    const [[firstCall, firstId], [secondCall, secondId]] = [...waitingCalls] as [
      [string, string],
      [string, string],
    ];
    expect(firstId).not.toBe(secondId);
    const pending = (await operator(tools, "GET", "/operator/approvals")).json().approvals;
    expect(pending.map((approval: { id: string }) => approval.id).sort()).toEqual([firstId, secondId].sort());

    await operator(tools, "POST", `/operator/approvals/${firstId}`, { body: { answer: "yes" } });
    const resultOf = (callId: string) =>
      events.find((event) => event.type === "tool.result" && event.data.call_id === callId);
    await expect.poll(() => resultOf(firstCall)).toBeDefined();
    expect(resultOf(firstCall)?.data).toMatchObject({
      structured_content: { approval_id: firstId, answer: "yes" },
    });
    // the other call still waits for its own answer
    expect(resultOf(secondCall)).toBeUndefined();
    expect((await operator(tools, "GET", `/operator/approvals/${secondId}`)).json().status).toBe("pending");

    await operator(tools, "POST", `/operator/approvals/${secondId}`, { body: { answer: "no" } });
    await turn;
    expect(resultOf(secondCall)?.data).toMatchObject({
      content: [{ type: "text", text: "Operator answered no." }],
      structured_content: { approval_id: secondId, answer: "no" },
    });
    expect(events.at(-1)?.type).toBe("turn.completed");
  });
});

describe("the operator's endpoints", () => {
  it("refuse the tools token, and the tool endpoints refuse the operator token", async () => {
    const { approvalId, turn, session } = await askAndWait("Rotate the keys?");
    for (const [method, path] of [
      ["GET", "/operator/approvals"],
      ["GET", `/operator/approvals/${approvalId}`],
      ["POST", `/operator/approvals/${approvalId}`],
    ] as const) {
      const refused = await operator(tools, method, path, { token: tools.token, body: { answer: "yes" } });
      expect(refused.status).toBe(401);
    }
    expect((await operator(tools, "GET", `/operator/approvals/${approvalId}`)).json().status).toBe("pending");
    const cli = runCli(["answer", approvalId, "yes", "--config", tools.configPath, "--url", tools.url], {
      LOCAL_TOOLS_OPERATOR_KEY: tools.token,
    });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain("refused the operator token in LOCAL_TOOLS_OPERATOR_KEY");

    const toolCall = await operator(tools, "POST", "/tools/echo", {
      token: tools.operatorToken,
      body: { tenant_id: "acme", session_id: "s", call_id: "c", arguments: { text: "x" } },
    });
    expect(toolCall.status).toBe(401);

    await operator(tools, "POST", `/operator/approvals/${approvalId}`, { body: { answer: "no" } });
    await turn;
    await client.close(session.id);
  });

  it("refuse bad answers with clear errors", async () => {
    const cases: [string, unknown, number, RegExp][] = [
      ["/operator/approvals/apr_missing", { answer: "yes" }, 404, /no approval apr_missing/],
      ["/operator/approvals/apr_missing", { answer: "maybe" }, 400, /answer: must be "yes" or "no"/],
      ["/operator/approvals/apr_missing", { answer: "yes", extra: 1 }, 400, /extra: unknown field/],
    ];
    for (const [path, body, status, message] of cases) {
      const response = await operator(tools, "POST", path, { body });
      expect(response.status).toBe(status);
      expect(response.json().error.message).toMatch(message);
    }
  });

  it("serve a page that holds no data and no token", async () => {
    const page = await operator(tools, "GET", "/operator", { token: "none" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.text).toContain("/operator/approvals");
    expect(page.text).not.toContain(tools.operatorToken);
    expect(page.text).not.toContain("apr_");
  });
});

it("never logs a token, in the service or in Brain", async () => {
  const logs = `${tools.output()}\n${brain.logs()}`;
  expect(logs).toContain("tool call answered");
  for (const secret of [tools.token, tools.operatorToken, brain.keys.acme])
    expect(logs).not.toContain(secret);
});
