import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionEvent } from "../../src/client/client.js";
import type { TestBrain } from "../helpers/brain.js";
import { type LocalTools, startBrainFor, startLocalTools } from "./local-tools-process.js";

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

/** Run a turn that waits `seconds`, recording when each event reached this SSE client. */
async function waitTurn(seconds: number, onProgress?: (sessionId: string) => Promise<void>) {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["wait"],
    script: [{ tool_calls: [{ name: "wait", arguments: { seconds } }] }, { text: "{{result}}" }],
  });
  const seen: { event: SessionEvent; at: number }[] = [];
  const stream = client.streamEvents(session.id, { signal: AbortSignal.timeout(15_000) });
  const first = stream.next();
  await client.sendMessage(session.id, "wait");
  for (let next = await first; !next.done; next = await stream.next()) {
    seen.push({ event: next.value, at: performance.now() });
    if (
      next.value.type === "tool.progress" &&
      onProgress &&
      seen.filter((s) => s.event.type === "tool.progress").length === 1
    ) {
      await onProgress(session.id);
    }
    if (["turn.completed", "turn.failed", "turn.interrupted"].includes(next.value.type)) break;
  }
  await stream.return(undefined);
  return seen;
}

it("streams progress that Brain's SSE clients see live, then its result", async () => {
  const seen = await waitTurn(1);
  const progress = seen.filter(({ event }) => event.type === "tool.progress");
  const result = seen.find(({ event }) => event.type === "tool.result");
  expect(progress.length).toBeGreaterThanOrEqual(3);
  const payloads = progress.map(({ event }) =>
    event.type === "tool.progress" ? event.data.data : undefined,
  );
  const elapsed = payloads.map((payload) => (payload as { elapsed_seconds: number }).elapsed_seconds);
  expect(elapsed).toEqual([...elapsed].sort((a, b) => a - b));
  expect(payloads[0]).toMatchObject({ total_seconds: 1 });
  // live: the first progress came long before the result, not in a batch with it
  expect((result?.at ?? 0) - (progress[0]?.at ?? 0)).toBeGreaterThan(400);
  expect(result?.event.data).toMatchObject({
    is_error: false,
    content: [{ type: "text", text: "Waited 1 seconds." }],
    structured_content: { waited_seconds: 1 },
  });
});

it("stops waiting when the caller goes away", async () => {
  const started = performance.now();
  const seen = await waitTurn(30, async (sessionId) => {
    await brain.client().interrupt(sessionId);
  });
  const result = seen.find(({ event }) => event.type === "tool.result")?.event;
  expect(result?.data).toMatchObject({ is_error: true, error: { code: "cancelled" } });
  const callId = result?.type === "tool.result" ? result.data.call_id : "";
  // the service noticed the closed connection and ended the handler, long before 30 s
  await expect
    .poll(() => tools.output())
    .toMatch(new RegExp(`"call_id":"${callId}".*the caller went away before the result`));
  const line = tools
    .output()
    .split("\n")
    .find((l) => l.includes(callId) && l.includes("the caller went away"));
  expect(JSON.parse(line as string).duration_ms).toBeLessThan(5000);
  expect(performance.now() - started).toBeLessThan(10_000);
});
