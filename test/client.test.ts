import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainClient, BrainTimeoutError, BrainUnreachableError } from "../src/client/client.js";
import { closedPort } from "./helpers/ports.js";

const KEY = "client-timeout-key-5f6e7d";
// a Brain that has stopped answering: it takes each request and never responds
let stalled: ReturnType<typeof createServer>;
let url: string;
const closedByClient: string[] = [];

beforeAll(async () => {
  stalled = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/catalog") {
      res.writeHead(200, { "content-type": "application/json" }).write('{"id":');
    }
    req.socket.once("close", () => closedByClient.push(req.url ?? ""));
  });
  await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
});

afterAll(async () => {
  stalled.closeAllConnections();
  await new Promise((resolve) => stalled.close(resolve));
});

describe("BrainClient time limit", () => {
  it("gives up on a request Brain does not answer, says which, and closes the connection", async () => {
    const client = new BrainClient(url, KEY, { timeoutMs: 200 });
    const error = await client.getSession("ses_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrainTimeoutError);
    expect((error as Error).message).toBe("Brain did not answer GET /sessions/ses_1 within 0.2 s");
    expect((error as Error).message).not.toContain(KEY);
    await expect.poll(() => closedByClient).toContain("/sessions/ses_1");
  });

  it("counts the body too: headers and then nothing is a timeout", async () => {
    const client = new BrainClient(url, KEY, { timeoutMs: 200 });
    // this server answers /catalog with headers and half a body, then nothing
    const error = await client.catalog().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrainTimeoutError);
  });
});

describe("BrainClient retries", () => {
  // a server that drops the first connection of each request path, then answers
  let flaky: ReturnType<typeof createServer>;
  let flakyUrl: string;
  const seen: string[] = [];
  beforeAll(async () => {
    flaky = createServer((req, res) => {
      const key = `${req.method} ${req.url}`;
      seen.push(key);
      if (seen.filter((entry) => entry === key).length === 1) return req.socket.destroy();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tools: [] }));
    });
    await new Promise<void>((resolve) => flaky.listen(0, "127.0.0.1", resolve));
    flakyUrl = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    flaky.closeAllConnections();
    await new Promise((resolve) => flaky.close(resolve));
  });

  it("sends a GET again after a dropped connection, and never a POST, which Brain may have done", async () => {
    const client = new BrainClient(flakyUrl, KEY);
    await expect(client.catalog()).resolves.toEqual({ tools: [] });
    expect(seen.filter((entry) => entry === "GET /catalog")).toHaveLength(2);
    const error = await client.sendMessage("ses_1", "hello").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrainUnreachableError);
    expect(seen.filter((entry) => entry === "POST /sessions/ses_1/messages")).toHaveLength(1);
  });

  it("gives up at once on a refused connection, saying so, and stops when its signal fires", async () => {
    const closed = new BrainClient(`http://127.0.0.1:${await closedPort()}`, KEY);
    const error = await closed.catalog().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrainUnreachableError);
    expect((error as Error).message).toBe("Brain could not be reached for GET /catalog: ECONNREFUSED");
    const stop = new AbortController();
    stop.abort(new Error("the person left"));
    await expect(new BrainClient(url, KEY).catalog({ signal: stop.signal })).rejects.toThrow(
      "the person left",
    );
  });
});
