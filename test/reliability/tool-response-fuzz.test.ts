import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { runTurn } from "../helpers/turns.js";
import { seededRandom } from "./random.js";
import { type RawToolService, startRawToolService } from "./raw-tool-service.js";

const random = seededRandom();
const seedNote = `RELIABILITY_SEED=${random.seed}`;
const MAX_OUTPUT = 4096;

const VALID_JSON = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 47\r\nconnection: close\r\n\r\n{"content":[{"type":"text","text":"hi there"}]}',
);
const VALID_SSE = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nevent: progress\ndata: {"n":1}\n\nevent: result\ndata: {"content":[{"type":"text","text":"done"}]}\n\n',
);

const head = (type: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: ${type}\r\n${extra}connection: close\r\n\r\n`;

/** Write `bytes` one at a time, `everyMs` apart, until the socket closes. */
async function dribble(socket: Socket, bytes: string, everyMs: number): Promise<void> {
  for (const byte of bytes) {
    if (socket.destroyed) return;
    socket.write(byte);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A hostile answer, and the outcomes Brain may record for it ("ok" or the codes of docs/protocol.md). */
interface Case {
  answer: (socket: Socket) => unknown;
  outcomes: readonly string[];
  /** Only the slow cases get a short call timeout: on a loaded CI machine no other case may hit one. */
  timeoutSeconds?: number;
  maxOutputBytes?: number;
}

// Generous, so that only the slow cases below can reach a time limit, however loaded the machine.
const HEADERS_TIMEOUT_SECONDS = 5;
const CALL_TIMEOUT_SECONDS = 30;

const FAILED = ["connection_lost", "invalid_result"];

const NAMED: Record<string, Case> = {
  "random-bytes": { answer: (s) => s.end(random.bytes(512)), outcomes: FAILED },
  "random-after-status-line": {
    answer: (s) => s.end(Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\n"), random.bytes(256)])),
    outcomes: FAILED,
  },
  "no-status-line": { answer: (s) => s.end('{"content":[]}'), outcomes: FAILED },
  "huge-header": {
    answer: (s) => s.end(`${head("application/json", `x-big: ${"a".repeat(100_000)}\r\n`)}{}`),
    outcomes: ["connection_lost"],
  },
  "ten-thousand-headers": {
    answer: (s) => s.end(`${head("application/json", "x-h: 1\r\n".repeat(10_000))}{}`),
    outcomes: ["connection_lost"],
  },
  "nul-in-header": {
    answer: (s) => s.end(`${head("application/json", "x-bad: a\0b\r\n")}{"content":[]}`),
    outcomes: ["connection_lost", "invalid_result"],
  },
  "wrong-type-never-read": {
    // keep-alive, body left unread: Brain must drop it without an unhandled error
    answer: (s) =>
      s.write("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 100000\r\n\r\n<html>"),
    outcomes: ["invalid_result"],
  },
  "declared-length-over-limit": {
    answer: (s) =>
      s.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${MAX_OUTPUT * 1000}\r\n\r\n{"content":`,
      ),
    outcomes: ["output_too_large"],
  },
  "length-longer-than-body": {
    answer: (s) =>
      s.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"content":'),
    outcomes: ["connection_lost"],
  },
  "bad-chunk-size": {
    answer: (s) =>
      s.end(`${head("application/json", "transfer-encoding: chunked\r\n")}zz\r\n{}\r\n0\r\n\r\n`),
    outcomes: ["connection_lost"],
  },
  "chunked-cut-short": {
    answer: (s) => s.end(`${head("application/json", "transfer-encoding: chunked\r\n")}10\r\n{"content":[`),
    outcomes: ["connection_lost"],
  },
  "sse-cut-mid-result": {
    answer: (s) => s.end(`${head("text/event-stream")}event: result\ndata: {"content":[`),
    outcomes: ["invalid_result"],
  },
  "close-delimited-json": {
    answer: (s) => s.end(`${head("application/json")}{"content":[{"type":"text","text":"fine"}]}`),
    outcomes: ["ok"],
  },
  "slowloris-body": {
    answer: (s) => {
      s.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n");
      return dribble(s, "x".repeat(200), 50);
    },
    outcomes: ["timeout"],
    timeoutSeconds: 5,
  },
  "slowloris-headers": {
    answer: (s) => dribble(s, `HTTP/1.1 200 OK\r\n${"x-slow: 1\r\n".repeat(1000)}`, 20),
    outcomes: ["headers_timeout"],
  },
  "sse-endless-line": {
    answer: async (s) => {
      s.write(`${head("text/event-stream")}data: `);
      for (let i = 0; i < 64 && !s.destroyed; i++) {
        if (!s.write("x".repeat(16 * 1024))) await new Promise((resolve) => s.once("drain", resolve));
      }
    },
    outcomes: ["output_too_large"],
  },
  "sse-progress-flood": {
    answer: (s) =>
      s.end(
        `${head("text/event-stream")}${'event: progress\ndata: {"n":1}\n\n'.repeat(2000)}event: result\ndata: {"content":[]}\n\n`,
      ),
    outcomes: ["ok"],
  },
  "nested-too-deep": {
    // valid JSON, small enough, but deeper than any stack: storing it must not be what fails
    answer: (s) =>
      s.end(
        `${head("application/json")}{"structured_content":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`,
      ),
    outcomes: ["invalid_result"],
    maxOutputBytes: 1_048_576,
  },
  "progress-nested-too-deep": {
    answer: (s) =>
      s.end(
        `${head("text/event-stream")}event: progress\ndata: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n\nevent: result\ndata: {"content":[]}\n\n`,
      ),
    outcomes: ["invalid_result"],
    maxOutputBytes: 1_048_576,
  },
  "status-999": {
    answer: (s) => s.end("HTTP/1.1 999 Odd\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
    outcomes: ["http_status", "connection_lost", "invalid_result"],
  },
  "informational-then-result": {
    answer: (s) => {
      s.write("HTTP/1.1 102 Processing\r\n\r\n");
      s.end(VALID_JSON);
    },
    outcomes: ["ok", "connection_lost", "invalid_result"],
  },
};

/** Valid answers broken at random: cut short, bytes flipped, garbage spliced in. */
function mutant(): Case {
  const base = random.pick([VALID_JSON, VALID_SSE]);
  const bytes = Buffer.from(base);
  const kind = random.int(3);
  let out: Buffer;
  if (kind === 0) out = bytes.subarray(0, random.int(bytes.length));
  else if (kind === 1) {
    for (let i = 0; i < 1 + random.int(4); i++) bytes[random.int(bytes.length)] = random.int(256);
    out = bytes;
  } else {
    const at = random.int(bytes.length);
    out = Buffer.concat([bytes.subarray(0, at), random.bytes(1 + random.int(64)), bytes.subarray(at)]);
  }
  return { answer: (s) => s.end(out), outcomes: ["any"] };
}

const CASES: Record<string, Case> = {
  ...NAMED,
  ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`mutant-${i}`, mutant()])),
};
const toolName = (name: string) => name.replace(/-/g, "_");

let services: Map<string, RawToolService>;
let brain: BrainProcess;

beforeAll(async () => {
  services = new Map(
    await Promise.all(
      Object.entries(CASES).map(
        async ([name, { answer }]) => [name, await startRawToolService(answer)] as const,
      ),
    ),
  );
  brain = await startBrainProcess({
    tools: Object.keys(CASES).map((name) => ({
      name: toolName(name),
      description: `answers ${name}`,
      input_schema: { type: "object" },
      url: services.get(name)?.url,
      tenants: ["acme"],
      timeout_seconds: CASES[name]?.timeoutSeconds ?? CALL_TIMEOUT_SECONDS,
      max_output_bytes: CASES[name]?.maxOutputBytes ?? MAX_OUTPUT,
    })),
    limits: { tool_headers_timeout_seconds: HEADERS_TIMEOUT_SECONDS, max_progress_bytes: 131_072 },
  });
});

afterAll(async () => {
  await brain?.stop();
  await Promise.all([...(services?.values() ?? [])].map((service) => service.close()));
});

describe("malformed tool responses", () => {
  it("each ends its call with exactly one tool.result, of a fitting outcome, and Brain stays up", async () => {
    const client = brain.client();
    const callOnce = async ([name, fuzz]: [string, Case]) => {
      const tool = toolName(name);
      const session = await client.createSession({
        tools: [tool],
        script: [{ tool_calls: [{ name: tool, arguments: {} }] }, { text: "after" }],
      });
      const events = await runTurn(client, session.id, "go");
      return { name, fuzz, session, events };
    };
    // one well-formed answer first, alone: a cold Brain compiles undici's HTTP parser on its first
    // call, which on a loaded machine can take longer than a case's time limit
    const isWarmUp = ([name]: [string, Case]) => name === "close-delimited-json";
    const settled = [
      ...(await Promise.allSettled(Object.entries(CASES).filter(isWarmUp).map(callOnce))),
      ...(await Promise.allSettled(
        Object.entries(CASES)
          .filter((entry) => !isWarmUp(entry))
          .map(callOnce),
      )),
    ];
    expect(brain.process().exitCode, `Brain exited:\n${brain.output()}`).toBeNull();
    expect(brain.process().signalCode).toBeNull();
    const runs = settled.map((run) => {
      if (run.status === "rejected") throw run.reason;
      return run.value;
    });
    for (const { name, fuzz, session, events } of runs) {
      const where = `${name} (${seedNote})`;
      expect(events.at(-1)?.type, where).toBe("turn.completed");
      const stored = await client.events(session.id);
      const results = stored.filter((event) => event.type === "tool.result");
      expect(results, where).toHaveLength(1);
      const result = results[0]?.data as {
        is_error: boolean;
        unknown_outcome?: boolean;
        error?: { code: string };
      };
      const outcome = result.error?.code ?? (result.is_error ? "tool_error" : "ok");
      if (!fuzz.outcomes.includes("any")) expect(fuzz.outcomes, where).toContain(outcome);
      // every failure here happened after the request went out: the tool may have done the work
      if (result.error) expect(result.unknown_outcome, where).toBe(true);
    }
    // each call was sent exactly once
    for (const [name, service] of services) expect(service.received, name).toHaveLength(1);

    expect(await (await fetch(`${brain.url}/healthz`)).json()).toEqual({ status: "ok" });
    // nothing went to the error log: no crashed turn, no failed request
    expect(brain.output()).not.toMatch(/"level":(50|60)/);
  }, 60_000);
});
