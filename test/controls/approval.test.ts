import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient, StoredEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, refusal, waitForEvents } from "../helpers/turns.js";

let service: ToolService;
let brain: TestBrain;
let client: BrainClient;

const tool = (name: string, path: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} tool`,
  input_schema: { type: "object", properties: { text: { type: "string" } } },
  url: service.at(path),
  tenants: ["acme"],
  ...extra,
});

beforeAll(async () => {
  service = await startToolService({
    "/guarded": (call, res) =>
      sendJson(res, textResult(`did:${(call.body.arguments as { text: string }).text}`)),
    "/free": (call, res) =>
      sendJson(res, textResult(`free:${(call.body.arguments as { text: string }).text}`)),
  });
  brain = await startBrain({
    tools: [tool("guarded", "/guarded", { approval: "always" }), tool("free", "/free")],
  });
  client = brain.client();
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

const guarded = (text: string) => ({ name: "guarded", arguments: { text } });
const sentTo = (path: string, text: string) =>
  service.calls.filter(
    (call) => call.path === path && (call.body.arguments as { text: string }).text === text,
  );

/** A session whose first step asks for `calls`, and whose second says what the results were. */
async function sessionAsking(calls: { name: string; arguments: unknown }[]) {
  return client.createSession({
    tools: ["guarded", "free"],
    script: [{ tool_calls: calls }, { text: "after: {{result}}" }],
  });
}

const waiting = (events: StoredEvent[], count = 1) =>
  ofType(events, "tool.approval_requested").length >= count;
const ended = (events: StoredEvent[]) =>
  ["turn.completed", "turn.failed", "turn.interrupted"].includes(events.at(-1)?.type ?? "");

describe("a binding with approval always", () => {
  it("sends nothing until a person approves, then sends the call once, bound to its id", async () => {
    const session = await sessionAsking([guarded("approve-me")]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(client, session.id, (events) => waiting(events));
    const request = ofType(asked, "tool.approval_requested")[0];
    const call = ofType(asked, "tool.call")[0];
    expect(request?.data).toMatchObject({
      call_id: call?.data.call_id,
      name: "guarded",
      arguments: { text: "approve-me" },
    });
    expect(Date.parse(request?.data.expires_at ?? "")).toBeGreaterThan(Date.now());
    expect(sentTo("/guarded", "approve-me")).toHaveLength(0);
    expect((await client.getSession(session.id)).status).toBe("running");

    const callId = call?.data.call_id as string;
    expect(await client.answerApproval(session.id, callId, { decision: "approve" })).toEqual({
      call_id: callId,
      decision: "approve",
    });
    const events = await waitForEvents(client, session.id, ended);
    expect(events.map((e) => e.type).slice(2)).toEqual([
      "turn.started",
      "message.assistant",
      "tool.call",
      "tool.approval_requested",
      "tool.approval",
      "tool.result",
      "message.assistant",
      "turn.completed",
    ]);
    const sent = sentTo("/guarded", "approve-me");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers["idempotency-key"]).toBe(callId);
    expect(ofType(events, "message.assistant").at(-1)?.data.text).toBe("after: did:approve-me");

    // one answer per call: the second is refused, whatever it says
    const again = await refusal(client.answerApproval(session.id, callId, { decision: "deny" }));
    expect([again.status, again.code]).toEqual([409, "call_not_waiting"]);
  });

  it("gives a denied call an is_error result, code denied, with the reason, and never sends it", async () => {
    const session = await sessionAsking([guarded("deny-me")]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(client, session.id, (events) => waiting(events));
    const callId = ofType(asked, "tool.call")[0]?.data.call_id as string;
    await client.answerApproval(session.id, callId, { decision: "deny", reason: "not on a Friday" });
    const events = await waitForEvents(client, session.id, ended);
    expect(ofType(events, "tool.approval")[0]?.data).toEqual({
      call_id: callId,
      decision: "deny",
      reason: "not on a Friday",
    });
    const result = ofType(events, "tool.result")[0]?.data;
    expect(result).toMatchObject({ call_id: callId, is_error: true, error: { code: "denied" } });
    expect(result?.unknown_outcome).not.toBe(true);
    expect(JSON.stringify(result)).toContain("not on a Friday");
    expect(sentTo("/guarded", "deny-me")).toHaveLength(0);
    expect(events.at(-1)?.type).toBe("turn.completed");
  });

  it("lets parallel calls wait independently: an approved one is sent while its sibling still waits", async () => {
    const session = await sessionAsking([
      guarded("first"),
      guarded("second"),
      { name: "free", arguments: { text: "unguarded" } },
    ]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(
      client,
      session.id,
      (events) => waiting(events, 2) && ofType(events, "tool.result").length === 1,
    );
    // the call without approval went out at once
    expect(ofType(asked, "tool.result")[0]?.data.name).toBe("free");
    const [first, second] = ofType(asked, "tool.call").map((call) => call.data.call_id as string);
    await client.answerApproval(session.id, first as string, { decision: "approve" });
    const oneDone = await waitForEvents(
      client,
      session.id,
      (events) => ofType(events, "tool.result").length === 2,
    );
    expect(sentTo("/guarded", "first")).toHaveLength(1);
    expect(sentTo("/guarded", "second")).toHaveLength(0);
    expect(oneDone.at(-1)?.type).toBe("tool.result");
    expect((await client.getSession(session.id)).status).toBe("running");

    await client.answerApproval(session.id, second as string, { decision: "approve" });
    const events = await waitForEvents(client, session.id, ended);
    expect(events.at(-1)?.type).toBe("turn.completed");
    expect(sentTo("/guarded", "second")).toHaveLength(1);
    // the model is given the results in the order it asked
    expect(ofType(events, "message.assistant").at(-1)?.data.text).toBe("after: free:unguarded");
  });

  it("cancels a waiting call when the turn is interrupted, with no unknown outcome, and refuses a late answer", async () => {
    const session = await sessionAsking([guarded("interrupted")]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(client, session.id, (events) => waiting(events));
    const callId = ofType(asked, "tool.call")[0]?.data.call_id as string;
    await client.interrupt(session.id);
    const events = await waitForEvents(client, session.id, ended);
    const result = ofType(events, "tool.result")[0]?.data;
    expect(result).toMatchObject({ is_error: true, error: { code: "cancelled" } });
    expect(result?.unknown_outcome).not.toBe(true);
    expect(events.at(-1)?.type).toBe("turn.interrupted");
    const late = await refusal(client.answerApproval(session.id, callId, { decision: "approve" }));
    expect([late.status, late.code]).toEqual([409, "call_not_waiting"]);
    expect(sentTo("/guarded", "interrupted")).toHaveLength(0);
  });

  it("cancels a waiting call when the session is closed", async () => {
    const session = await sessionAsking([guarded("closed")]);
    await client.sendMessage(session.id, "go");
    await waitForEvents(client, session.id, (events) => waiting(events));
    await client.close(session.id);
    const events = await client.events(session.id);
    expect(ofType(events, "tool.result")[0]?.data).toMatchObject({ error: { code: "cancelled" } });
    expect(events.at(-1)?.type).toBe("session.closed");
    expect(sentTo("/guarded", "closed")).toHaveLength(0);
  });

  it("answers 404 for a call that is not waiting in the session, or another tenant's, and 400 for a bad body", async () => {
    const session = await sessionAsking([guarded("refusals")]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(client, session.id, (events) => waiting(events));
    const callId = ofType(asked, "tool.call")[0]?.data.call_id as string;
    const unknown = await refusal(client.answerApproval(session.id, "call_nope", { decision: "approve" }));
    expect([unknown.status, unknown.code]).toEqual([404, "not_found"]);
    const otherTenant = await refusal(
      brain.client("globex").answerApproval(session.id, callId, { decision: "approve" }),
    );
    expect(otherTenant.status).toBe(404);
    const res = await fetch(`${brain.url}/sessions/${session.id}/calls/${callId}/approval`, {
      method: "POST",
      headers: { authorization: `Bearer ${brain.keys.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "maybe", arguments: { text: "changed" } }),
    });
    expect(res.status).toBe(400);
    // still waiting, with the arguments it was asked with
    await client.answerApproval(session.id, callId, { decision: "approve" });
    await waitForEvents(client, session.id, ended);
    expect(sentTo("/guarded", "refusals")).toHaveLength(1);
    expect(sentTo("/guarded", "changed")).toHaveLength(0);
  });

  it("keeps a waiting call waiting across a restart; the answer after it resumes the turn", async () => {
    const session = await sessionAsking([guarded("across-restart")]);
    await client.sendMessage(session.id, "go");
    const asked = await waitForEvents(client, session.id, (events) => waiting(events));
    const callId = ofType(asked, "tool.call")[0]?.data.call_id as string;
    await brain.restart();
    client = brain.client();
    expect(await client.events(session.id)).toEqual(asked);
    expect((await client.getSession(session.id)).status).toBe("running");
    await client.answerApproval(session.id, callId, { decision: "approve" });
    const events = await waitForEvents(client, session.id, ended);
    expect(events.at(-1)?.type).toBe("turn.completed");
    expect(sentTo("/guarded", "across-restart")).toHaveLength(1);
  });
});

describe("an approval nobody answers", () => {
  let quick: TestBrain;
  beforeAll(async () => {
    quick = await startBrain({
      tools: [tool("guarded", "/guarded", { approval: "always" })],
      limits: { approval_timeout_seconds: 0.3 },
    });
  });
  afterAll(async () => quick?.stop());

  it("expires: Brain records the expiry, the call ends approval_expired unsent, a late answer is refused", async () => {
    const c = quick.client();
    const session = await c.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [guarded("too-late")] }, { text: "after: {{result}}" }],
    });
    await c.sendMessage(session.id, "go");
    const events = await waitForEvents(c, session.id, ended);
    const callId = ofType(events, "tool.call")[0]?.data.call_id as string;
    expect(ofType(events, "tool.approval")[0]?.data).toEqual({
      call_id: callId,
      decision: "deny",
      expired: true,
    });
    const result = ofType(events, "tool.result")[0]?.data;
    expect(result).toMatchObject({ is_error: true, error: { code: "approval_expired" } });
    expect(result?.unknown_outcome).not.toBe(true);
    expect(sentTo("/guarded", "too-late")).toHaveLength(0);
    const late = await refusal(c.answerApproval(session.id, callId, { decision: "approve" }));
    expect(late.code).toBe("call_not_waiting");
  });
});
