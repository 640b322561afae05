import { connect } from "node:net";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrainProcess, startBrainProcess } from "../helpers/brain-process.js";
import { type Random, seededRandom } from "./random.js";

const random = seededRandom();
const seedNote = `RELIABILITY_SEED=${random.seed}`;
const MAX_REQUEST_BYTES = 65_536;

let brain: BrainProcess;
let pool: Pool;
let own: string;
let others: string;

beforeAll(async () => {
  brain = await startBrainProcess({ limits: { max_request_bytes: MAX_REQUEST_BYTES } });
  pool = new Pool(brain.url, { connections: 8 });
  own = (await brain.client("acme").createSession()).id;
  others = (await brain.client("globex").createSession()).id;
});

afterAll(async () => {
  await pool?.close();
  await brain?.stop();
});

interface Probe {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** What this probe is, for the failure message. */
  what: string;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** Send a probe; an event stream is only opened (its headers are the answer), never read. */
async function send(probe: Probe): Promise<Answer> {
  const stop = new AbortController();
  const response = await pool.request({
    method: probe.method as "GET",
    path: probe.path,
    headers: probe.headers,
    ...(probe.body !== undefined && { body: probe.body }),
    signal: stop.signal,
  });
  const contentType = String(response.headers["content-type"] ?? "");
  if (contentType.startsWith("text/event-stream")) {
    response.body.on("error", () => undefined);
    stop.abort();
    return { status: response.statusCode, contentType, body: "" };
  }
  return { status: response.statusCode, contentType, body: await response.body.text() };
}

/** What is wrong with an answer, or undefined: never a 5xx; every 4xx a JSON error with a code and a message. */
function problemWith(answer: Answer): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.body.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  if (!answer.contentType.startsWith("application/json")) return `a ${answer.status} that is not JSON`;
  try {
    const { error } = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
    if (typeof error?.code !== "string" || !/^[a-z_]+$/.test(error.code)) return "an error without a code";
    if (typeof error.message !== "string" || error.message.length < 5) return "an error without a message";
  } catch {
    return `a ${answer.status} whose body is not JSON: ${answer.body.slice(0, 100)}`;
  }
  return undefined;
}

const json = "application/json";
const auth = () => ({ authorization: `Bearer ${brain.keys.acme}` });

/** Bodies a hostile or broken client sends: none of them may get past validation or break Brain. */
function hostileBodies(r: Random): (Buffer | string)[] {
  const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  return [
    "",
    "null",
    "[]",
    "42",
    '"text"',
    "{",
    '{"content":',
    '{"content":123}',
    '{"content":""}',
    '{"content":"hi","extra":true}',
    '{"__proto__":{"polluted":true},"content":"hi"}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    `{"content":${deep(50_000)}}`,
    `{"config":{"metadata":${`{"a":`.repeat(5000)}1${"}".repeat(5000)}}}`,
    `{"content":"${"x".repeat(MAX_REQUEST_BYTES + 1)}"}`,
    '{"content":1e999}',
    '{"config":{"tools":["../../etc/passwd"]}}',
    '{"config":{"tools":[1,2,3]}}',
    '{"config":{"max_steps":-1}}',
    '{"config":{"max_steps":1e9}}',
    `{"config":{"model":"${"m".repeat(10_000)}"}}`,
    '{"config":{"model":"default","script":[{"delay_ms":99999999999}]}}',
    '{"config":{"script":[{"tool_calls":[{"name":"x"}],"bogus":1}]}}',
    '{"config":null}',
    '{"config":{"tools":"echo"}}',
    Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"content":"bom"}')]),
    Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    Buffer.from('{"content":"hi"}', "utf16le"),
    '{"content":"nul\u0000byte"}',
    r.bytes(256),
    r.bytes(4096),
  ];
}

const CONTENT_TYPES = [
  json,
  "application/json; charset=utf-16",
  "APPLICATION/JSON",
  "text/plain",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  undefined,
];

/** Every route of /openapi.json, with `{id}` filled by `id`. */
async function routes(): Promise<{ method: string; template: string }[]> {
  const spec = (await (await fetch(`${brain.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(spec.paths).flatMap(([template, item]) =>
    Object.keys(item).map((method) => ({ method: method.toUpperCase(), template })),
  );
}

const fill = (template: string, id: string) => template.replace("{id}", id);

describe("hostile requests against every route", () => {
  it("each gets a 4xx with a clear JSON error, never a 5xx, and Brain stays up", async () => {
    const table = await routes();
    expect(table.length).toBeGreaterThanOrEqual(10);
    const ids = [
      "ses_nonexistent",
      others,
      "x".repeat(4096),
      "%00",
      "..%2F..%2Fetc%2Fpasswd",
      "%ZZ",
      encodeURIComponent("ünïcödé\u202e"),
      `${own}%20`,
    ];
    const authHeaders: Record<string, string>[] = [
      {},
      { authorization: "Bearer" },
      { authorization: `Bearer ${"k".repeat(8000)}` },
      { authorization: "Basic YWNtZTpzZWNyZXQ=" },
      { authorization: `Bearer ${brain.keys.acme}x` },
      { authorization: `bearer  ${brain.keys.acme.toUpperCase()}` },
      { authorization: `Bearer ${brain.keys.acme} extra` },
    ];
    const probes: Probe[] = [];
    for (const { method, template } of table) {
      for (const id of ids) {
        probes.push({
          method,
          path: fill(template, id),
          headers: auth(),
          what: `${method} ${template} id=${id.slice(0, 40)}`,
        });
      }
      for (const headers of authHeaders) {
        probes.push({
          method,
          path: fill(template, own),
          headers,
          what: `${method} ${template} auth=${JSON.stringify(headers).slice(0, 60)}`,
        });
      }
      if (method === "POST") {
        for (const [i, body] of hostileBodies(random).entries()) {
          for (const type of CONTENT_TYPES) {
            probes.push({
              method,
              path: fill(template, own),
              headers: { ...auth(), ...(type && { "content-type": type }) },
              body,
              what: `${method} ${template} body #${i} as ${type}`,
            });
          }
        }
      }
      for (const verb of ["PUT", "PATCH", "OPTIONS", "TRACE"]) {
        probes.push({
          method: verb,
          path: fill(template, own),
          headers: auth(),
          what: `${verb} ${template}`,
        });
      }
    }
    for (const query of [
      "after=-1",
      "after=abc",
      "after=99999999999999999999",
      "after=1&after=2",
      "limit=0",
      "limit=10001",
      "limit=1e3",
      `cursor=${"%00".repeat(100)}`,
      `after=${"9".repeat(5000)}`,
    ]) {
      probes.push({
        method: "GET",
        path: `/sessions/${own}/events?${query}`,
        headers: auth(),
        what: `events ?${query.slice(0, 40)}`,
      });
      probes.push({
        method: "GET",
        path: `/sessions?${query}`,
        headers: auth(),
        what: `list ?${query.slice(0, 40)}`,
      });
    }
    for (const lastEventId of ["abc", "-5", "1e99", "9".repeat(5000), "\u00ff"]) {
      probes.push({
        method: "GET",
        path: `/sessions/${own}/events`,
        headers: { ...auth(), accept: "text/event-stream", "last-event-id": lastEventId },
        what: `SSE with Last-Event-ID ${lastEventId.slice(0, 20)}`,
      });
    }
    probes.push({
      method: "POST",
      path: `/sessions/${own}/messages`,
      headers: { ...auth(), "content-type": json, traceparent: "00-zz-zz-zz" },
      body: '{"content":"traced badly"}',
      what: "a malformed traceparent",
    });

    const failures: string[] = [];
    for (let i = 0; i < probes.length; i += 16) {
      await Promise.all(
        probes.slice(i, i + 16).map(async (probe) => {
          const answer = await send(probe).catch((error: Error) => ({
            status: 0,
            contentType: "",
            body: error.message,
          }));
          const problem = answer.status === 0 ? `no answer: ${answer.body}` : problemWith(answer);
          if (problem) failures.push(`${probe.what}: ${problem}`);
          if (probe.path.includes(others) && answer.status < 300)
            failures.push(`${probe.what}: another tenant's session answered ${answer.status}`);
        }),
      );
    }
    expect(failures, seedNote).toEqual([]);
    expect(brain.process().exitCode, brain.output()).toBeNull();
    // still serving, and a session still runs a turn
    const client = brain.client();
    const session = await client.createSession();
    await client.sendMessage(session.id, "still there?");
    expect((await client.getSession(session.id)).id).toBe(session.id);
    // no 500 was logged, and no key reached the log
    expect(brain.output()).not.toMatch(/"level":(50|60)/);
    for (const key of Object.values(brain.keys)) expect(brain.output()).not.toContain(key);
  });

  it("answers malformed HTTP with a 4xx JSON error and keeps serving", async () => {
    const raw = [
      "GARBAGE\r\n\r\n",
      "GET /healthz HTTP/9.9\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
      `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(70_000)}\r\n\r\n`,
      "GET /healthz HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n",
      "POST /sessions HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST /sessions HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n",
      "POST /sessions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
      "GET /heal\u0000thz HTTP/1.1\r\nhost: x\r\n\r\n",
      "BREW /sessions HTTP/1.1\r\nhost: x\r\n\r\n",
      // a body cap Brain checks before reading: the 413 comes at once, not after waiting for bytes
      `POST /sessions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${brain.keys.acme}\r\ncontent-type: application/json\r\ncontent-length: ${MAX_REQUEST_BYTES * 100}\r\n\r\n{}`,
    ];
    for (const request of raw) {
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(Number(new URL(brain.url).port), "127.0.0.1");
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk;
          // a kept-alive connection would not close by itself: stop once the whole body is in
          const [head = "", body] = text.split("\r\n\r\n", 2);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
          if (body !== undefined && Buffer.byteLength(body) >= length) socket.destroy();
        });
        socket.on("error", () => resolve(text));
        socket.on("close", () => resolve(text));
        socket.setTimeout(5000, () => socket.destroy());
        socket.write(request, "latin1");
      });
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1]);
      expect(
        status,
        `${JSON.stringify(request.slice(0, 60))} → ${answer.slice(0, 200)}`,
      ).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
      // Node's parser refuses most of these before Brain sees them; they still get Brain's JSON error
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
      expect(body, answer).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    }
    expect(brain.process().exitCode).toBeNull();
    expect((await fetch(`${brain.url}/healthz`)).status).toBe(200);
  });
});
