import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTool, OutcomeUnknown } from "../../kit/index.js";
import { checkToolService } from "../../src/tools-check/check.js";
import { envelope, type KitService, postCall, startKitService } from "./kit-service.js";

let service: KitService;
let charges = 0;
const keysSeen: string[] = [];
/** The calls of `hold` still running, by call id: each ends when the test says how. */
const held = new Map<string, (how: "done" | "unknown") => void>();

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
  const refund = defineTool({
    name: "refund",
    description: "Refunds a charge.",
    input: Type.Object({ cents: Type.Integer() }),
    idempotent: true,
    handler: ({ cents }) => `refunded ${cents}`,
  });
  const hold = defineTool({
    name: "hold",
    description: "Runs until the test ends it, or its caller leaves.",
    input: Type.Object({}),
    idempotent: true,
    handler: (_args, ctx) =>
      new Promise<string>((resolve, reject) => {
        held.set(ctx.call_id, (how) =>
          how === "done" ? resolve(`held ${ctx.call_id}`) : reject(new OutcomeUnknown("the worker died")),
        );
        ctx.signal.addEventListener("abort", () => reject(new Error("stopped: the caller left")));
      }),
  });
  service = await startKitService({ tools: [charge("charge", true), charge("plain", false), refund, hold] });
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

  it("keys a call by its tool too: the same key and arguments sent to another tool run that tool", async () => {
    const body = envelope({ cents: 500 });
    const options = { token: service.token, idempotencyKey: "order-2" };
    expect((await postCall(`${service.url}/tools/charge`, body, options)).status).toBe(200);
    const refunded = await postCall(`${service.url}/tools/refund`, body, options);
    expect(refunded.json()).toEqual({ content: [{ type: "text", text: "refunded 500" }] });
    expect(refunded.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("keeps nothing for a call whose handler threw because its caller left: a retry runs", async () => {
    const options = { token: service.token, idempotencyKey: "hold-left" };
    const left = envelope({});
    const caller = new AbortController();
    const call = postCall(`${service.url}/tools/hold`, left, { ...options, signal: caller.signal });
    await expect.poll(() => held.has(left.call_id)).toBe(true);
    caller.abort();
    await expect(call).rejects.toThrow();
    await expect
      .poll(() => service.logs())
      .toMatch(new RegExp(`"call_id":"${left.call_id}".*the caller went away before the result`));

    const retry = envelope({});
    const answer = postCall(`${service.url}/tools/hold`, retry, options);
    await expect.poll(() => held.has(retry.call_id)).toBe(true);
    held.get(retry.call_id)?.("done");
    expect((await answer).json()).toEqual({ content: [{ type: "text", text: `held ${retry.call_id}` }] });
  });

  it("does not run a call whose caller hung up while an earlier call with its key ran", async () => {
    const options = { token: service.token, idempotencyKey: "hold-waiting" };
    const first = envelope({});
    const firstCall = postCall(`${service.url}/tools/hold`, first, options);
    await expect.poll(() => held.has(first.call_id)).toBe(true);
    const gone = envelope({});
    const caller = new AbortController();
    const goneCall = postCall(`${service.url}/tools/hold`, gone, { ...options, signal: caller.signal });
    // the second call reaches its wait for the first, then its caller hangs up and the service sees it
    await new Promise((resolve) => setTimeout(resolve, 100));
    caller.abort();
    await expect(goneCall).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // the first ends without a result, so its key is free again
    held.get(first.call_id)?.("unknown");
    await expect(firstCall).rejects.toThrow();
    await expect.poll(() => service.logs()).toMatch(/the caller went away before the handler ran/);
    expect(held.has(gone.call_id)).toBe(false);

    const retry = envelope({});
    const answer = postCall(`${service.url}/tools/hold`, retry, options);
    await expect.poll(() => held.has(retry.call_id)).toBe(true);
    held.get(retry.call_id)?.("done");
    expect((await answer).json()).toEqual({ content: [{ type: "text", text: `held ${retry.call_id}` }] });
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
