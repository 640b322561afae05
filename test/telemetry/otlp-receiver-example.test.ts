import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BRAIN_BIN, runBrain, runNode } from "../helpers/cli.js";
import {
  brainUrlFromLog,
  type StartedProcess,
  startEchoService,
  startProcess,
} from "../helpers/processes.js";

// The README's "Observability" walkthrough, as a user runs it: examples/otlp-receiver.mjs, the echo
// service, Brain from `brain tools config` exporting JSON to the receiver, and examples/session.mjs.
const API_KEY = "otlp-example-key-4d7e1a";
const TOOLS_KEY = "otlp-example-tools-9c2b5f";

let receiver: StartedProcess & { ready: string };
let echo: StartedProcess & { ready: string };
let brain: StartedProcess & { ready: string };
let dir: string;

/** One line the receiver prints per span. */
const SPAN_LINE =
  /^trace ([0-9a-f]{32}) span ([0-9a-f]{16}) parent ([0-9a-f]{16}|-) (.+) \d+\.\d{3} ms( ERROR)? (\{.*\})$/;

interface PrintedSpan {
  traceId: string;
  spanId: string;
  parent: string;
  name: string;
  error: boolean;
  attributes: Record<string, unknown>;
}

function printedSpans(lines: string[]): PrintedSpan[] {
  return lines.flatMap((line): PrintedSpan[] => {
    const m = SPAN_LINE.exec(line);
    if (!m) return [];
    const [, traceId = "", spanId = "", parent = "", name = "", error, attributes = "{}"] = m;
    return [
      { traceId, spanId, parent, name, error: error !== undefined, attributes: JSON.parse(attributes) },
    ];
  });
}

/** Wait until `find` finds something in what the receiver printed; fails with that after 10 s. */
async function printed<T>(find: (lines: string[]) => T | undefined): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = find(receiver.output);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not printed in 10 s:\n${receiver.output.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  receiver = await startProcess(
    ["examples/otlp-receiver.mjs"],
    { PORT: "0" },
    (line) => /^otlp receiver listening on (\S+)$/.exec(line)?.[1],
  );
  echo = await startEchoService(TOOLS_KEY);
  dir = mkdtempSync(join(tmpdir(), "otlp-receiver-example-"));
  const generated = runBrain(
    ["tools", "config", echo.ready, "--listen", "127.0.0.1:0", "--store", "./brain-traced.db"],
    { BRAIN_TOOLS_KEY: TOOLS_KEY },
  );
  expect(generated.code, generated.stderr).toBe(0);
  writeFileSync(join(dir, "brain-traced.json"), generated.stdout);
  brain = await startProcess(
    [BRAIN_BIN, "-config", join(dir, "brain-traced.json")],
    {
      BRAIN_API_KEY: API_KEY,
      BRAIN_TOOLS_KEY: TOOLS_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.ready,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "20",
    },
    brainUrlFromLog,
  );
});

afterAll(async () => {
  await brain?.stop();
  await echo?.stop();
  await receiver?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("prints a turn that called echo as the README says: the turn's spans, each under the turn, the turn last", async () => {
  const session = runNode("examples/session.mjs", ["hello, traced"], {
    BRAIN_URL: brain.ready,
    BRAIN_API_KEY: API_KEY,
    BRAIN_TOOLS: "echo",
  });
  expect(session.code, session.stdout + session.stderr).toBe(0);
  const sessionId = /^session (ses_\w+)/m.exec(session.stdout)?.[1];
  expect(sessionId, session.stdout).toBeDefined();

  const turn = await printed((lines) =>
    printedSpans(lines).find(
      (span) => span.name === "turn" && span.attributes["brain.session.id"] === sessionId,
    ),
  );
  const lines = receiver.output;
  // nothing but its own line and one line per span, all of them this turn's
  expect(lines[0]).toBe(`otlp receiver listening on ${receiver.ready}`);
  const spans = printedSpans(lines);
  expect(spans).toHaveLength(lines.length - 1);
  expect(spans.every((span) => span.traceId === turn.traceId)).toBe(true);

  expect(turn.parent).toBe("-");
  expect(turn.attributes["brain.turn.end"]).toBe("completed");
  // a span is sent when it ends: the turn, which ends last, is printed last
  expect(spans.at(-1)).toEqual(turn);
  const under = spans.slice(0, -1);
  expect(under.map((span) => span.name).sort()).toEqual([
    "chat default",
    "chat default",
    "execute_tool echo",
    "store append",
    "store append",
    "store append",
  ]);
  expect(under.every((span) => span.parent === turn.spanId && !span.error)).toBe(true);
  expect(under.filter((span) => span.name === "chat default").map((span) => span.attributes)).toMatchObject([
    { "gen_ai.request.model": "default", "gen_ai.response.finish_reasons": ["tool_use"] },
    { "gen_ai.request.model": "default", "gen_ai.response.finish_reasons": ["end_turn"] },
  ]);
  expect(under.find((span) => span.name === "execute_tool echo")?.attributes).toMatchObject({
    "gen_ai.tool.name": "echo",
    "brain.tool.outcome": "ok",
    "http.response.status_code": 200,
  });
});

it("reads the JSON encoding only: protobuf is refused with 415 naming http/json, and prints nothing", async () => {
  const before = receiver.output.length;
  const post = (contentType: string, body: string | Uint8Array) =>
    fetch(`${receiver.ready}/v1/traces`, { method: "POST", headers: { "content-type": contentType }, body });

  const protobuf = await post("application/x-protobuf", new Uint8Array([0x0a, 0x00]));
  expect(protobuf.status).toBe(415);
  expect(((await protobuf.json()) as { message: string }).message).toContain(
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
  );
  const malformed = await post("application/json", "{not json");
  expect(malformed.status).toBe(400);
  // JSON that is not a span: refused whole, and the receiver goes on
  const timeless = await post(
    "application/json",
    JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{}] }] }] }),
  );
  expect(timeless.status).toBe(400);
  const nullResource = await post("application/json", JSON.stringify({ resourceSpans: [null] }));
  expect(nullResource.status).toBe(400);

  // a span of its own, failed, with each kind of attribute value: printed as one line
  const span = {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    parentSpanId: "",
    name: "by hand",
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000000001500000",
    status: { code: 2 },
    attributes: [
      // past the first chunk of the body, so a character split across two chunks comes out whole
      { key: "pad", value: { stringValue: "é".repeat(70_000) } },
      { key: "s", value: { stringValue: "text" } },
      { key: "i", value: { intValue: "42" } },
      { key: "d", value: { doubleValue: 0.5 } },
      { key: "b", value: { boolValue: false } },
      { key: "a", value: { arrayValue: { values: [{ stringValue: "x" }, { intValue: 1 }] } } },
    ],
  };
  const json = await post(
    "application/json",
    JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }),
  );
  expect(json.status).toBe(200);
  const line = await printed((lines) => lines.slice(before).find((text) => text.includes(" by hand ")));
  expect(line).toBe(
    `trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7 parent - by hand 1.500 ms ERROR {"pad":"${"é".repeat(70_000)}","s":"text","i":42,"d":0.5,"b":false,"a":["x",1]}`,
  );
  expect(receiver.output.slice(before)).toEqual([line]);
});

it("stops on SIGTERM, as the README's `kill %1` stops it", async () => {
  expect(await receiver.stop("SIGTERM")).toBe(0);
});
