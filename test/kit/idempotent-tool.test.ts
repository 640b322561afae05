import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTool } from "../../kit/index.js";
import { checkToolService } from "../../src/tools-check/check.js";
import { envelope, type KitService, postCall, startKitService } from "./kit-service.js";

let service: KitService;
let charges = 0;
const keysSeen: string[] = [];

beforeAll(async () => {
  const charge = (name: string, idempotent: boolean) =>
    defineTool({
      name,
      description: "Charges a card: must not happen twice.",
      input: Type.Object({ cents: Type.Integer() }),
      idempotent,
      handler: ({ cents }, ctx) => {
        charges += 1;
        keysSeen.push(ctx.idempotency_key);
        return `charged ${cents} (charge #${charges})`;
      },
    });
  service = await startKitService({ tools: [charge("charge", true), charge("plain", false)] });
});
afterAll(async () => service?.close());

describe("an idempotent kit tool", () => {
  it("runs a call sent again with the same Idempotency-Key once, and gives the first result again", async () => {
    const before = charges;
    const body = envelope({ cents: 500 });
    const first = await postCall(`${service.url}/tools/charge`, body, {
      token: service.token,
      idempotencyKey: "order-1",
    });
    const again = await postCall(`${service.url}/tools/charge`, body, {
      token: service.token,
      idempotencyKey: "order-1",
    });
    expect(first.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(charges).toBe(before + 1);
    expect(keysSeen.at(-1)).toBe("order-1");

    const other = await postCall(`${service.url}/tools/charge`, envelope({ cents: 900 }), {
      token: service.token,
      idempotencyKey: "order-1",
    });
    expect(other.status).toBe(400);
    expect(charges).toBe(before + 1);
  });

  it("runs concurrent repeats once; without the header the key is the call id", async () => {
    const before = charges;
    const body = envelope({ cents: 1 });
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        postCall(`${service.url}/tools/charge`, body, { token: service.token, idempotencyKey: "k-race" }),
      ),
    );
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    expect(charges).toBe(before + 1);
    const plain = envelope({ cents: 2 });
    await postCall(`${service.url}/tools/plain`, plain, { token: service.token });
    expect(keysSeen.at(-1)).toBe(plain.call_id);
  });

  it("says so in its tool list, and `brain tools check` checks it; a tool that does not say so is not called twice", async () => {
    const manifest = await fetch(`${service.url}/tools`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    const tools = ((await manifest.json()) as { tools: { name: string; idempotent?: boolean }[] }).tools;
    expect(tools.find((tool) => tool.name === "charge")?.idempotent).toBe(true);
    expect(tools.find((tool) => tool.name === "plain")).not.toHaveProperty("idempotent");

    const before = charges;
    const outcomes = await checkToolService(`${service.url}/tools/charge`, {
      token: service.token,
      arguments: { cents: 3 },
    });
    expect(outcomes.every((outcome) => outcome.pass)).toBe(true);
    expect(outcomes.find((outcome) => outcome.id === "idempotency")?.why).toContain("the same result");
    expect(charges).toBe(before + 1);

    const plain = await checkToolService(`${service.url}/tools/plain`, {
      token: service.token,
      arguments: { cents: 3 },
    });
    expect(plain.find((outcome) => outcome.id === "idempotency")).toMatchObject({ pass: true });
    expect(plain.find((outcome) => outcome.id === "idempotency")?.why).toContain("does not say idempotent");
    expect(charges).toBe(before + 2);
  });
});

describe("a service that says idempotent and is not", () => {
  let liar: Server;
  let url: string;
  beforeAll(async () => {
    let n = 0;
    liar = createServer(async (req, res) => {
      for await (const _chunk of req) {
        // the body is not looked at
      }
      if (req.headers.authorization !== "Bearer t") return res.writeHead(401).end();
      res.writeHead(200, { "content-type": "application/json" });
      if (req.method === "GET") {
        const tool = { name: "pay", description: "pays", input_schema: { type: "object" }, idempotent: true };
        return res.end(JSON.stringify({ tools: [tool] }));
      }
      n += 1;
      res.end(JSON.stringify({ content: [{ type: "text", text: `paid #${n}` }] }));
    });
    await new Promise<void>((resolve) => liar.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}/tools/pay`;
  });
  afterAll(() => new Promise<void>((resolve) => liar.close(() => resolve())));

  it("fails the idempotency rule", async () => {
    const outcomes = await checkToolService(url, { token: "t", arguments: {} });
    expect(outcomes.find((outcome) => outcome.id === "idempotency")).toMatchObject({
      pass: false,
      why: expect.stringContaining("another result"),
    });
  });
});
