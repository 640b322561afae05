import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ToolManifest, ToolManifestSchema } from "../../protocol/manifest.js";
import { check, compile } from "../../protocol/validation.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { pythonAvailable, type StartedProcess, startPythonService } from "../helpers/processes.js";
import { runTurn } from "../helpers/turns.js";

const TOKEN = "python-token-1a2b3c4d";
const python = pythonAvailable("the tests of examples/tools/server.py");
let service: StartedProcess & { ready: string };
let port: number;
let brain: TestBrain;

beforeAll(async () => {
  if (!python) return;
  service = await startPythonService(TOKEN);
  port = Number(new URL(service.ready).port);
  const binding = (name: string) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: `${service.ready}/tools/${name}`,
    token_env: "PY_TOKEN",
    tenants: ["acme"],
  });
  brain = await startBrain({ tools: [binding("echo"), binding("countdown")] }, { env: { PY_TOKEN: TOKEN } });
});

afterAll(async () => {
  await brain?.stop();
  await service?.stop();
});

/** A request as Brain writes it: a JSON body with its Content-Length. */
function post(path: string, body: string, { token = TOKEN, last = false } = {}): string {
  return [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Authorization: Bearer ${token}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(last ? ["Connection: close"] : []),
    "",
    body,
  ].join("\r\n");
}

const call = (args: unknown) =>
  JSON.stringify({ tenant_id: "acme", session_id: "ses_1", call_id: "call_1", arguments: args });

/**
 * Write `requests` at once on one connection and read until the service closes it: the status of
 * each response, in order, and the whole text. Unread bytes of one request would be taken for the
 * next one's start, and show here as a 400 or a missing answer.
 */
function onOneConnection(...requests: string[]): Promise<{ statuses: number[]; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () =>
      resolve({ statuses: [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1])), text }),
    );
    // no end(): Brain never half-closes, and the service takes a closed end for a caller gone
    socket.write(requests.join(""));
  });
}

describe.skipIf(!python)("examples/tools/server.py", () => {
  it("answers JSON and streams SSE progress through Brain", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["echo", "countdown"],
      script: [
        {
          tool_calls: [
            { name: "echo", arguments: { text: "from python" } },
            { name: "countdown", arguments: { from: 3 } },
          ],
        },
        { text: "{{result}}" },
      ],
    });
    const events = await runTurn(client, session.id, "go");
    const results = events.filter((e) => e.type === "tool.result").map((e) => e.data);
    const byName = Object.fromEntries(results.map((r) => [r.name, r]));
    expect(byName.echo).toMatchObject({ is_error: false, content: [{ type: "text", text: "from python" }] });
    expect(byName.countdown).toMatchObject({
      is_error: false,
      content: [{ text: "liftoff" }],
      structured_content: { counted: 3 },
    });
    const progress = events
      .filter((e) => e.type === "tool.progress")
      .map((e) => (e.data.data as { remaining: number }).remaining);
    expect(progress).toEqual([3, 2, 1]);
    expect(events.at(-2)).toMatchObject({ type: "message.assistant", data: { text: "liftoff" } });
  });

  it("reads a refused call's body, so the next call on the connection is answered", async () => {
    const next = post("/tools/echo", call({ text: "next" }), { last: true });
    const refused = await onOneConnection(post("/tools/echo", call({ text: "x" }), { token: "wrong" }), next);
    expect(refused.statuses).toEqual([401, 200]);
    expect(refused.text).toContain('"text": "next"');
    // a body that is not JSON, and a tool it does not have: 4xx, which Brain reports as http_status
    expect((await onOneConnection(post("/tools/echo", "{not json"), next)).statuses).toEqual([400, 200]);
    expect((await onOneConnection(post("/tools/nope", call({})), next)).statuses).toEqual([404, 200]);
  });

  it("answers a malformed body 400 with a JSON error, never dropping the connection", async () => {
    const next = post("/tools/echo", call({ text: "next" }), { last: true });
    const bodies = [
      "null",
      "[1]",
      "{}",
      call([1]),
      JSON.stringify({ tenant_id: "acme", session_id: "ses_1", arguments: {} }),
      `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
    ];
    for (const body of bodies) {
      for (const tool of ["/tools/echo", "/tools/countdown"]) {
        const answered = await onOneConnection(post(tool, body), next);
        expect(answered.statuses, `${tool} ${body.slice(0, 20)}`).toEqual([400, 200]);
        expect(answered.text).toContain('"code": "invalid_request"');
      }
    }
  });

  it("answers refused arguments with a result whose is_error is true", async () => {
    for (const [tool, args] of [
      ["/tools/countdown", { from: "x" }],
      ["/tools/countdown", { from: true }],
      ["/tools/countdown", { from: 0 }],
      ["/tools/echo", { text: 5 }],
    ] as const) {
      const answered = await onOneConnection(post(tool, call(args), { last: true }));
      expect(answered.statuses).toEqual([200]);
      expect(answered.text).toContain('"is_error": true');
    }
  });

  it("refuses a body without Content-Length (Brain always sends one) and closes the connection", async () => {
    const chunked = [
      "POST /tools/echo HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${TOKEN}`,
      "Transfer-Encoding: chunked",
      "",
      "5\r\nhello\r\n0\r\n\r\n",
    ].join("\r\n");
    const answered = await onOneConnection(chunked, post("/tools/echo", call({ text: "x" }), { last: true }));
    expect(answered.statuses).toEqual([411]);
  });

  it("ends an event stream by closing the connection after the result", async () => {
    const stream = await onOneConnection(post("/tools/countdown", call({ from: 2 })));
    expect(stream.statuses).toEqual([200]);
    expect(stream.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(stream.text.trimEnd()).toMatch(
      /event: result\ndata: \{.*"structured_content": \{"counted": 2\}\}$/,
    );
  });

  it("stops a countdown when the caller closes the connection, as Brain does on interrupt", async () => {
    const socket = connect(port, "127.0.0.1");
    socket.write(
      post(
        "/tools/countdown",
        JSON.stringify({
          tenant_id: "acme",
          session_id: "ses_1",
          call_id: "call_gone",
          arguments: { from: 1000 },
        }),
      ),
    );
    await new Promise<void>((resolve) =>
      socket.on("data", (chunk) => String(chunk).includes("event: progress") && resolve()),
    );
    socket.destroy();
    await expect
      .poll(() => service.output.join("\n"), { timeout: 10_000 })
      .toContain("call_gone: cancelled, Brain closed the connection");
  });

  it("lists its tools at GET /tools in the manifest format, with the token only", async () => {
    const listed = await fetch(`${service.ready}/tools`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(listed.status).toBe(200);
    const manifest = check(compile<ToolManifest>(ToolManifestSchema), await listed.json());
    expect(manifest.ok && manifest.value.tools.map((tool) => tool.name)).toEqual(["echo", "countdown"]);
    expect((await fetch(`${service.ready}/tools`)).status).toBe(401);
  });
});
