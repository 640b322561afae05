// The floor under Brain's CPU per tool call: a process that does only the I/O a call needs to keep
// Brain's guarantees, and nothing else. Per call, as Brain does: the assistant message and the
// tool.call stored in one commit before the request goes out, the POST to the tool service through
// undici, the answer read whole and parsed, the tool.result stored in a second commit, and every
// event written to the session's SSE client. No model, context, validation, limits, timers,
// metrics or event bus: what Brain spends above this is its own machinery.
//
// It speaks the part of Brain's API the benchmarks use (POST /sessions, GET /sessions/ID/events,
// POST /sessions/ID/messages) and reads the same config file, so the harness runs it as a Brain.
// Run: node dist/bench/floor-server.js -config FILE
import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { Agent } from "undici";
import type { NewEvent } from "../protocol/events.js";
import type { ResultObject } from "../protocol/result.js";
import type { SessionConfig } from "../protocol/session.js";
import { sseFrame } from "../src/events/bus.js";
import { newId } from "../src/ids.js";
import { SqliteStore } from "../src/store/sqlite.js";

interface FloorConfig {
  store: { path: string };
  tenants: { id: string; api_key_env: string }[];
  models: { script: { tool_calls?: { name: string; arguments: unknown }[] }[] }[];
  tools: { url: string; token_env: string }[];
}

const config = JSON.parse(
  readFileSync(process.argv[process.argv.indexOf("-config") + 1] ?? "", "utf8"),
) as FloorConfig;
const tenant = config.tenants[0];
const tool = config.tools[0];
const script = config.models[0]?.script;
if (!tenant || !tool || !script) throw new Error("the floor needs a tenant, a tool and a scripted model");
const apiKey = process.env[tenant.api_key_env];
const toolUrl = new URL(tool.url);
const toolHeaders = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${process.env[tool.token_env]}`,
};
const store = new SqliteStore(config.store.path);
const dispatcher = new Agent();

interface FloorSession {
  /** The step of the script its next model call plays: each session plays it from the start. */
  step: number;
  streams: Set<ServerResponse>;
}
const sessions = new Map<string, FloorSession>();
const sessionConfig: SessionConfig = { model: "default", tools: ["echo"], max_steps: 1000, metadata: {} };
const usage = { input_tokens: 0, output_tokens: 0 };

/** Store events in one commit, then write them to the session's streams, as Brain publishes them. */
async function append(id: string, session: FloorSession, events: NewEvent[]): Promise<void> {
  const result = await store.append(id, events);
  if (!result.ok) throw new Error(`append to ${id} refused`);
  const frames = result.events.map(sseFrame).join("");
  for (const stream of session.streams) stream.write(frames);
}

/** A turn: the script's steps from where the session is, each tool step one sequential call. */
async function runTurn(id: string, session: FloorSession): Promise<void> {
  for (;;) {
    const step = script?.[session.step++ % script.length];
    const calls = step?.tool_calls ?? [];
    if (calls.length === 0) {
      await append(id, session, [
        { type: "message.assistant", data: { text: "done", tool_calls: [], stop_reason: "end_turn", usage } },
        { type: "turn.completed", data: { stop_reason: "end_turn", steps: 0, usage } },
      ]);
      return;
    }
    for (const call of calls) {
      const callId = newId("call");
      await append(id, session, [
        {
          type: "message.assistant",
          data: { text: "", tool_calls: [{ call_id: callId, ...call }], stop_reason: "tool_use", usage },
        },
        { type: "tool.call", data: { call_id: callId, ...call } },
      ]);
      const response = await dispatcher.request({
        origin: toolUrl.origin,
        path: toolUrl.pathname,
        method: "POST",
        headers: { ...toolHeaders, "idempotency-key": callId },
        body: JSON.stringify({
          tenant_id: tenant?.id,
          session_id: id,
          call_id: callId,
          arguments: call.arguments,
        }),
      });
      const answer = (await response.body.json()) as ResultObject;
      // an answer that is not a 200 is the service's failure, as Brain counts it
      const failed = response.statusCode !== 200 || answer.is_error === true;
      const result = { is_error: failed, content: answer.content ?? [], duration_ms: 0 };
      await append(id, session, [
        { type: "tool.result", data: { call_id: callId, name: call.name, ...result } },
      ]);
    }
  }
}

/** A request the floor could not carry out: a 500 with the reason, for the harness's error line. */
const answerFailure = (response: ServerResponse) => (error: unknown) => {
  response.writeHead(500, { "content-type": "text/plain" }).end(String(error));
};

const server = createServer((request, response) => {
  if (request.headers.authorization !== `Bearer ${apiKey}`) {
    response.writeHead(401).end();
    return;
  }
  const [, , id, what] = (request.url ?? "").split("/");
  const session = id ? sessions.get(id) : undefined;
  if (request.method === "POST" && request.url === "/sessions") {
    const created = newId("ses");
    const now = new Date().toISOString();
    void store
      .createSession(
        { id: created, tenant_id: tenant.id, config: sessionConfig, created_at: now },
        { type: "session.created", data: { config: sessionConfig } },
      )
      .then(() => {
        sessions.set(created, { step: 0, streams: new Set() });
        response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: created }));
      }, answerFailure(response));
  } else if (request.method === "GET" && session && id && what === "events") {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    response.flushHeaders();
    session.streams.add(response);
    response.on("close", () => session.streams.delete(response));
  } else if (request.method === "POST" && session && id && what === "messages") {
    request.resume().on("end", () => {
      void append(id, session, [
        { type: "message.user", data: { content: "go" } },
        { type: "turn.started", data: {} },
      ]).then(() => {
        response.writeHead(202, { "content-type": "application/json" }).end('{"seq":0}');
        void runTurn(id, session).catch((error: unknown) => {
          process.stderr.write(`floor: the turn of ${id} failed: ${String(error)}\n`);
        });
      }, answerFailure(response));
    });
  } else {
    response.writeHead(404).end();
  }
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  // the line the harness waits for, as Brain logs it
  process.stdout.write(`${JSON.stringify({ msg: "brain listening", url: `http://127.0.0.1:${port}` })}\n`);
});

process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void Promise.all([dispatcher.close(), store.close()]).then(() => process.exit(0));
});
