import { once } from "node:events";
import { connect } from "node:net";
import { Type } from "@sinclair/typebox";
import { Client } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineTool } from "../../kit/index.js";
import { rawJsonBody } from "../helpers/raw-http.js";
import { envelope, type KitService, startKitService } from "./kit-service.js";

// While a kit service stops, Brain may still send a call on a connection it keeps alive: the
// service must answer that the call was not started, and let the calls already running finish.

const started: string[] = [];
const stopReasons: Record<string, Promise<unknown>> = {};
let releaseHeld: () => void = () => {};

const tools = [
  defineTool({
    name: "work",
    description: "Runs until the service stops; `held` goes on until the test releases it.",
    input: Type.Object({ key: Type.String() }),
    handler: async ({ key }, ctx) => {
      started.push(key);
      const reason = new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(ctx.signal.reason), { once: true }),
      );
      stopReasons[key] = reason;
      await reason;
      if (key === "held") await new Promise<void>((resolve) => (releaseHeld = resolve));
      return `${key} stopped`;
    },
  }),
];

let service: KitService;
const clients: Client[] = [];
afterEach(async () => {
  releaseHeld();
  await service.close();
  await Promise.all(clients.splice(0).map((client) => client.destroy()));
  started.length = 0;
});

/** A client of one connection, kept alive between calls as Brain keeps its own. */
function connection(): Client {
  const client = new Client(service.url, { pipelining: 1 });
  clients.push(client);
  return client;
}

async function call(client: Client, key: string) {
  const response = await client.request({
    path: "/tools/work",
    method: "POST",
    headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
    body: JSON.stringify(envelope({ key })),
  });
  return { status: response.statusCode, headers: response.headers, body: await response.body.json() };
}

it("refuses a call sent on a kept-alive connection after stopping began, as not started", async () => {
  service = await startKitService({ tools, closeGraceMs: 5_000 });
  const warm = connection();
  const first = call(warm, "first");
  const held = call(connection(), "held");
  await expect.poll(() => started.length).toBe(2);

  const closed = service.close();
  // the call running on the warm connection gets its stop signal, answers, and leaves it open
  expect(await first).toMatchObject({ status: 200, headers: { connection: "keep-alive" } });

  // the held call keeps the service in its grace period while the next call arrives
  const late = await call(warm, "late");
  expect(late.status).toBe(421);
  expect(late.headers.connection).toBe("close");
  expect(late.body).toEqual({
    error: { code: "service_stopping", message: expect.stringMatching(/not started/) },
  });
  expect(started).toEqual(["first", "held"]);

  releaseHeld();
  expect(await held).toMatchObject({
    status: 200,
    body: { content: [{ type: "text", text: "held stopped" }] },
  });
  expect(String(await stopReasons.held)).toMatch(/the tool service is stopping/);
  await closed;
});

it("refuses a call whose body was still arriving when stopping began, without running it", async () => {
  service = await startKitService({ tools, closeGraceMs: 5_000 });
  const body = JSON.stringify(envelope({ key: "slow-body" }));
  const { hostname, port } = new URL(service.url);
  const socket = connect(Number(port), hostname);
  await once(socket, "connect");
  let reply = "";
  socket.on("data", (chunk) => {
    reply += chunk;
  });
  const received = once(service.server, "request");
  socket.write(
    `POST /tools/work HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${service.token}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  await received;

  const closed = service.close();
  socket.write(body.slice(10));
  await once(socket, "close");
  await closed;

  expect(reply).toMatch(/^HTTP\/1\.1 421 /);
  expect(reply).toMatch(/\r\nconnection: close\r\n/i);
  expect(rawJsonBody(reply).error.code).toBe("service_stopping");
  expect(started).toEqual([]);
});
