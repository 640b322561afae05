import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainClient, BrainTimeoutError } from "../src/client/client.js";

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
