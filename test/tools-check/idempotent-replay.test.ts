import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkToolService } from "../../src/tools-check/check.js";

describe("brain tools check on an idempotent tool that keeps its first result", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const kept = new Map<string, unknown>();
    server = createServer(async (req, res) => {
      for await (const _chunk of req) {
        // the arguments are not looked at
      }
      if (req.headers.authorization !== "Bearer t") return res.writeHead(401).end();
      if (req.method === "GET") {
        const tool = { name: "pay", description: "pays", input_schema: { type: "object" }, idempotent: true };
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ tools: [tool] }));
      }
      const key = String(req.headers["idempotency-key"]);
      const first = kept.get(key);
      if (first === undefined) {
        const result = {
          content: [{ type: "text", text: "paid" }],
          structured_content: { id: 7, cents: 500 },
        };
        kept.set(key, result);
        // the first answer as an event stream, compact
        res.writeHead(200, { "content-type": "text/event-stream" });
        return res.end(`event: result\ndata: ${JSON.stringify(result)}\n\n`);
      }
      // sent again: the kept result as JSON, as another serializer writes it (a jsonb column's
      // keys in its own order, with spaces)
      const { content } = first as { content: unknown };
      const reordered = { structured_content: { cents: 500, id: 7 }, content };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(reordered, null, 1));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools/pay`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("passes the idempotency rule when the result sent again is the same JSON, written another way", async () => {
    const outcomes = await checkToolService(url, { token: "t", arguments: {} });
    expect(outcomes.find((outcome) => outcome.id === "idempotency")).toMatchObject({
      pass: true,
      why: expect.stringContaining("the same result"),
    });
  });
});
