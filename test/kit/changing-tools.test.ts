import { Type } from "@sinclair/typebox";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool, OutcomeUnknown } from "../../kit/index.js";
import { envelope, type KitService, postCall, startKitService } from "./kit-service.js";

const named = (name: string) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    input: Type.Object({}),
    handler: () => `${name} answered`,
  });

const unknown = defineTool({
  name: "unknown",
  description: "Loses track of its work.",
  input: Type.Object({ stream: Type.Boolean() }),
  handler: ({ stream }, ctx) => {
    if (stream) ctx.progress({ step: 1 });
    throw new OutcomeUnknown("the backend died mid-call");
  },
});

let service: KitService;

beforeAll(async () => {
  service = await startKitService({ tools: [named("first"), unknown] });
});
afterAll(() => service?.close());

const listed = async () => {
  const response = await request(`${service.url}/tools`, {
    headers: { authorization: `Bearer ${service.token}` },
  });
  return ((await response.body.json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
};

it("serves the tools given to setTools from then on, and no longer the old ones", async () => {
  expect(await listed()).toEqual(["first", "unknown"]);
  service.setTools([named("second"), unknown]);
  expect(await listed()).toEqual(["second", "unknown"]);
  const old = await postCall(`${service.url}/tools/first`, envelope({}), { token: service.token });
  expect(old.status).toBe(404);
  const current = await postCall(`${service.url}/tools/second`, envelope({}), { token: service.token });
  expect(current.json()).toEqual({ content: [{ type: "text", text: "second answered" }] });
  expect(() => service.setTools([named("twin"), named("twin")])).toThrow('two tools are named "twin"');
});

it.each([false, true])(
  "closes the connection without a result when the outcome is unknown (streaming: %s)",
  async (stream) => {
    const call = postCall(`${service.url}/tools/unknown`, envelope({ stream }), { token: service.token });
    await expect(call).rejects.toThrow();
    await expect
      .poll(() => service.logs())
      .toContain('"outcome":"outcome_unknown","reason":"the backend died mid-call"');
  },
);
