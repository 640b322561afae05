import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkToolService, formatOutcomes } from "../../src/tools-check/check.js";
import { TOOL_SERVICE_RULES } from "../../src/tools-check/rules.js";

const TOKEN = "check-token-5f3a9c";
const RESULT = JSON.stringify({ content: [{ type: "text", text: "ok" }] });

type Answer = (res: ServerResponse) => void;

const sse = (res: ServerResponse, ...blocks: string[]) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(blocks.join(""));
};
const json = (res: ServerResponse, body: string, type = "application/json") => {
  res.writeHead(200, { "content-type": type });
  res.end(body);
};

/** Each service breaks one part of the protocol; all but `no-auth` check the token properly. */
const BROKEN: Record<string, { answer: Answer; fails: string[]; auth?: false }> = {
  "json-ok": { answer: (res) => json(res, RESULT), fails: [] },
  "sse-ok": {
    answer: (res) =>
      sse(res, ": hi\n\n", 'event: progress\ndata: {"n":1}\n\n', `event: result\ndata: ${RESULT}\n\n`),
    fails: [],
  },
  "no-auth": { answer: (res) => json(res, RESULT), fails: ["auth-missing", "auth-wrong"], auth: false },
  // with no output schema given, any structured_content object is valid
  "structured-mismatch": { answer: (res) => json(res, '{"structured_content":{"count":"many"}}'), fails: [] },
  "structured-ok": { answer: (res) => json(res, '{"structured_content":{"count":3}}'), fails: [] },
  "error-result": {
    answer: (res) => json(res, '{"content":[{"type":"text","text":"no"}],"is_error":true}'),
    fails: [],
  },
  "server-error": {
    answer: (res) => res.writeHead(500).end("boom"),
    fails: ["status", "content-type", "result"],
  },
  redirect: {
    answer: (res) => res.writeHead(302, { location: "/elsewhere" }).end(),
    fails: ["status", "content-type", "result"],
  },
  "text-plain": { answer: (res) => json(res, RESULT, "text/plain"), fails: ["content-type", "result"] },
  "not-json": { answer: (res) => json(res, "{oops"), fails: ["result"] },
  "unknown-field": {
    answer: (res) => json(res, JSON.stringify({ content: [], note: 1 })),
    fails: ["result"],
  },
  "empty-result": { answer: (res) => json(res, "{}"), fails: ["result"] },
  "bad-item": {
    answer: (res) => json(res, JSON.stringify({ content: [{ type: "video", url: "x" }] })),
    fails: ["result"],
  },
  "unknown-event": {
    answer: (res) => sse(res, "event: log\ndata: {}\n\n", `event: result\ndata: ${RESULT}\n\n`),
    fails: ["sse-framing"],
  },
  "progress-not-json": {
    answer: (res) => sse(res, "event: progress\ndata: half\n\n", `event: result\ndata: ${RESULT}\n\n`),
    fails: ["sse-framing"],
  },
  "no-result": {
    answer: (res) => sse(res, 'event: progress\ndata: {"n":1}\n\n'),
    fails: ["one-result", "result"],
  },
  "two-results": {
    answer: (res) => sse(res, `event: result\ndata: ${RESULT}\n\n`, `event: result\ndata: ${RESULT}\n\n`),
    fails: ["one-result"],
  },
  "stays-open": {
    answer: (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: result\ndata: ${RESULT}\n\n`);
    },
    fails: ["one-result"],
  },
  "slow-headers": { answer: () => {}, fails: ["status", "content-type", "result"] },
  "huge-result": {
    answer: (res) => json(res, JSON.stringify({ content: [{ type: "text", text: "x".repeat(5000) }] })),
    fails: ["result"],
  },
};

let url = "";
const sockets = new Set<Socket>();
const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  for await (const _chunk of req) {
    // drain the body; these services never look at it
  }
  const name = (req.url ?? "/").slice(1);
  const service = BROKEN[name];
  if (!service) return res.writeHead(404).end();
  if (service.auth !== false && req.headers.authorization !== `Bearer ${TOKEN}`)
    return res.writeHead(401).end();
  service.answer(res);
});
server.on("connection", (socket) => {
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

it.each(Object.entries(BROKEN))("%s fails exactly the rules it breaks", async (name, { fails }) => {
  const outcomes = await checkToolService(`${url}/${name}`, {
    token: TOKEN,
    arguments: {},
    headersTimeoutMs: 300,
    afterResultMs: 200,
    maxOutputBytes: 4096,
  });
  expect(outcomes.map((outcome) => outcome.id)).toEqual(TOOL_SERVICE_RULES.map((rule) => rule.id));
  expect(outcomes.filter((outcome) => !outcome.pass).map((outcome) => outcome.id)).toEqual(fails);
  for (const outcome of outcomes) expect(outcome.why).not.toBe("");
});

it("says why a rule fails, in words a tool author can act on", async () => {
  const check = (name: string) =>
    checkToolService(`${url}/${name}`, {
      token: TOKEN,
      arguments: {},
      headersTimeoutMs: 300,
      afterResultMs: 200,
    });
  const why = async (name: string, id: string) =>
    (await check(name)).find((outcome) => outcome.id === id)?.why;
  expect(await why("redirect", "status")).toBe(
    "answered 302, a redirect to /elsewhere, which Brain never follows",
  );
  expect(await why("no-auth", "auth-missing")).toBe("answered 200 to a call without a token; expected 401");
  expect(await why("slow-headers", "status")).toMatch(/no response headers within 0.3 s/);
  expect(await why("two-results", "one-result")).toBe("2 result events; send exactly one");
  expect(await why("stays-open", "one-result")).toMatch(/stayed open after its result/);
  expect(await why("unknown-field", "result")).toMatch(/result\.note: unknown field/);
  const report = formatOutcomes(await check("text-plain"));
  expect(report.split("\n")).toHaveLength(TOOL_SERVICE_RULES.length + 1);
  expect(report).toMatch(/^FAIL {2}content-type {2}content type "text\/plain"/m);
  expect(report).toMatch(/2 of \d+ rules fail$/);
  expect(report).not.toContain(TOKEN);
});

it("judges structured_content against an output schema it is given, and error results without it", async () => {
  const outputSchema = {
    type: "object",
    properties: { count: { type: "integer" } },
    required: ["count"],
  };
  const check = async (name: string, schema?: Record<string, unknown>) =>
    (
      await checkToolService(`${url}/${name}`, {
        token: TOKEN,
        arguments: {},
        afterResultMs: 200,
        ...(schema && { outputSchema: schema }),
      })
    ).find((outcome) => outcome.id === "result");
  expect(await check("structured-mismatch")).toMatchObject({ pass: true });
  expect(await check("structured-mismatch", outputSchema)).toMatchObject({
    pass: false,
    why: expect.stringMatching(/output_schema/),
  });
  expect(await check("structured-ok", outputSchema)).toMatchObject({
    pass: true,
    why: expect.stringMatching(/matching the output schema/),
  });
  expect(await check("error-result", outputSchema)).toMatchObject({ pass: true });
});
