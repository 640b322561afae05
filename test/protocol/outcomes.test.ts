import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { closedPort, hangingPort } from "../helpers/ports.js";
import { selfSignedCertificate } from "../helpers/tls.js";
import { startToolService, type ToolService } from "../helpers/tool-service.js";
import { runTurn, waitForEvents } from "../helpers/turns.js";
import { FAULTS } from "./fault-routes.js";

let service: ToolService;
let brain: TestBrain;
let client: BrainClient;
let refusedPort: number;
let hanging: Awaited<ReturnType<typeof hangingPort>>;

const toolName = (path: string) => path.slice(1).replace(/-/g, "_");

beforeAll(async () => {
  service = await startToolService({
    ...Object.fromEntries(FAULTS.map((fault) => [fault.path, fault.route])),
    "/redirect-target": (_, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end('{"content":[]}');
    },
  });
  refusedPort = await closedPort();
  hanging = await hangingPort();

  const binding = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `fault ${name}`,
    input_schema: { type: "object" },
    url,
    tenants: ["acme"],
    timeout_seconds: 10,
    ...extra,
  });
  brain = await startBrain({
    tools: [
      ...FAULTS.map((fault) => binding(toolName(fault.path), service.at(fault.path), fault.binding)),
      binding("refused", `http://127.0.0.1:${refusedPort}/tool`),
      binding("no_such_host", "http://brain-test-host.invalid/tool"),
      // longer than the headers limit, which must not start before the connection does
      binding("never_connects", `http://127.0.0.1:${hanging.port}/tool`, { timeout_seconds: 1.5 }),
    ],
    // generous enough for a loaded CI machine; the two time-limit faults set their own tighter ones
    limits: { tool_headers_timeout_seconds: 1, max_progress_bytes: 4096 },
  });
  client = brain.client();
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
  await hanging?.close();
});

/** One call of `tool` in a fresh session, next to a healthy session's turn that must still succeed. */
async function callOnce(tool: string) {
  const session = await client.createSession({
    tools: [tool],
    script: [{ tool_calls: [{ name: tool, arguments: {} }] }, { text: "after" }],
  });
  const healthy = await client.createSession({
    tools: ["ok_json"],
    script: [{ tool_calls: [{ name: "ok_json", arguments: {} }] }, { text: "fine" }],
  });
  const [events, other] = await Promise.all([
    runTurn(client, session.id, "go"),
    runTurn(client, healthy.id, "go"),
  ]);
  expect(other.at(-1)?.type).toBe("turn.completed");
  expect(other.find((e) => e.type === "tool.result")?.data.is_error).toBe(false);
  const result = events.find((e) => e.type === "tool.result")?.data as Record<string, unknown>;
  expect(events.at(-1)?.type, "the turn goes on after a failed call").toBe("turn.completed");
  return { result, events, session };
}

describe("every row of the outcomes table", () => {
  it.each(FAULTS.map((fault) => [fault.path, fault] as const))("%s", async (_, fault) => {
    const { result } = await callOnce(toolName(fault.path));
    if (fault.code === "ok") {
      expect(result).toMatchObject({ is_error: false });
      expect(result.error).toBeUndefined();
      expect(result.unknown_outcome).toBeUndefined();
      return;
    }
    if (fault.code === "tool_error") {
      // the service's own error result, recorded as it sent it
      expect(result).toMatchObject({ is_error: true, content: [{ type: "text", text: "disk full" }] });
      expect(result.error).toBeUndefined();
      return;
    }
    // exactly the result Brain makes: the code, whether the work may be done, and a text saying both
    expect(Object.keys(result).sort()).toEqual([
      "call_id",
      "content",
      "duration_ms",
      "error",
      "is_error",
      "name",
      "unknown_outcome",
    ]);
    expect(result).toMatchObject({
      is_error: true,
      unknown_outcome: fault.unknownOutcome,
      error: { code: fault.code, message: expect.any(String) },
    });
    const { message } = result.error as { message: string };
    expect(message.length).toBeGreaterThan(10);
    const advice = fault.unknownOutcome
      ? "The tool may have done the work anyway: check its effect before calling it again."
      : "The tool did not run.";
    expect(result.content).toEqual([
      { type: "text", text: `Tool call failed (${fault.code}): ${message} ${advice}` },
    ]);
  });

  it("unreachable: connection refused", async () => {
    const { result } = await callOnce("refused");
    expect(result).toMatchObject({ is_error: true, unknown_outcome: false, error: { code: "unreachable" } });
    expect(JSON.stringify(result)).toContain("ECONNREFUSED");
  });

  it("unreachable: DNS failure", async () => {
    const { result } = await callOnce("no_such_host");
    expect(result).toMatchObject({ is_error: true, unknown_outcome: false, error: { code: "unreachable" } });
  });

  it("unreachable: no connection within timeout_seconds, whatever the headers limit", async () => {
    const { result } = await callOnce("never_connects");
    expect(result).toMatchObject({
      is_error: true,
      unknown_outcome: false,
      error: { code: "unreachable", message: expect.stringContaining("no connection") },
    });
  });

  it("an interrupt ends a call that is still connecting at once: cancelled, not sent, not left to time out", async () => {
    const session = await client.createSession({
      tools: ["never_connects"],
      script: [{ tool_calls: [{ name: "never_connects", arguments: {} }] }, { text: "after" }],
    });
    await client.sendMessage(session.id, "go");
    await waitForEvents(client, session.id, (events) => events.some((e) => e.type === "tool.call"));
    const interrupted = Date.now();
    await client.interrupt(session.id);
    const events = await waitForEvents(client, session.id, (stored) =>
      stored.some((e) => e.type === "turn.interrupted"),
    );
    // not held until undici's 10 s connect timeout gives up on the connection
    expect(Date.now() - interrupted).toBeLessThan(5_000);
    // nothing went out: the tool did not run
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      unknown_outcome: false,
      error: { code: "cancelled", message: expect.stringContaining("before the call was sent") },
    });
  });

  it("a redirect's target receives nothing", async () => {
    const before = service.calls.filter((call) => call.path === "/redirect-target").length;
    for (const status of [301, 307]) await callOnce(`redirect_${status}`);
    expect(service.calls.filter((call) => call.path === "/redirect-target").length).toBe(before);
  });

  it("sends each call once: no retry after a 503 or a reset", async () => {
    for (const path of ["/status-503", "/reset-before-headers"]) {
      const before = service.calls.filter((call) => call.path === path).length;
      await callOnce(toolName(path));
      expect(service.calls.filter((call) => call.path === path).length).toBe(before + 1);
    }
  });
});

describe("TLS", () => {
  it.each([
    // a server with no certificate fails every handshake
    ["the handshake fails", () => ({}), /HANDSHAKE_FAILURE/],
    // a well-formed certificate that no trusted authority signed
    ["the certificate does not verify", selfSignedCertificate, /SELF_SIGNED_CERT/],
  ])("is unreachable when %s", async (_, options, reason) => {
    const tls = createTlsServer(options());
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    const port = (tls.address() as AddressInfo).port;
    const tlsBrain = await startBrain({
      tools: [
        {
          name: "tls",
          description: "TLS",
          input_schema: { type: "object" },
          url: `https://127.0.0.1:${port}/x`,
          tenants: ["acme"],
        },
      ],
    });
    try {
      const c = tlsBrain.client();
      const session = await c.createSession({
        tools: ["tls"],
        script: [{ tool_calls: [{ name: "tls", arguments: {} }] }, { text: "x" }],
      });
      const events = await runTurn(c, session.id, "go");
      expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
        is_error: true,
        unknown_outcome: false,
        error: { code: "unreachable", message: expect.stringMatching(reason) },
      });
    } finally {
      await tlsBrain.stop();
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });
});
