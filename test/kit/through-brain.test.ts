import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool, InspectionError, type SessionInspector } from "../../kit/index.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { runTurn, storedOnly } from "../helpers/turns.js";
import { type KitService, startKitService } from "./kit-service.js";

let service: KitService;
let brain: TestBrain;
let kept: SessionInspector | undefined;

const steps = Type.Object({ steps: Type.Integer({ minimum: 1, maximum: 5 }) });

beforeAll(async () => {
  service = await startKitService({
    tools: [
      defineTool({
        name: "count",
        description: "Counts, reporting progress.",
        input: steps,
        streaming: true,
        handler: async ({ steps: n }, ctx) => {
          for (let i = 1; i <= n; i++) {
            ctx.progress({ counted: i });
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return `counted to ${n}`;
        },
      }),
      defineTool({
        name: "look",
        description: "Reads its own session through Brain.",
        input: Type.Object({}),
        handler: async (_args, ctx) => {
          if (!ctx.inspection) throw new Error("no inspection grant");
          kept = ctx.inspection;
          const session = await ctx.inspection.session();
          const events = await ctx.inspection.events();
          const call = events.find((event) => event.type === "tool.call");
          return { structured_content: { session: session.id, types: events.map((e) => e.type), call } };
        },
      }),
    ],
  });
  const binding = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `${name} tool`,
    input_schema: name === "count" ? steps : { type: "object" },
    url: `${service.url}/tools/${name}`,
    token_env: "KIT_TOKEN",
    tenants: ["acme"],
    ...extra,
  });
  brain = await startBrain(
    { tools: [binding("count"), binding("look", { inspect_session: true })] },
    { env: { KIT_TOKEN: service.token } },
  );
});
afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

it("streams a kit tool's progress to Brain's SSE clients live, then its result", async () => {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["count"],
    script: [{ tool_calls: [{ name: "count", arguments: { steps: 3 } }] }, { text: "{{result}}" }],
  });
  const events = await runTurn(client, session.id, "go");
  const progress = events.filter((event) => event.type === "tool.progress");
  expect(progress.map((event) => event.data.data)).toEqual([{ counted: 1 }, { counted: 2 }, { counted: 3 }]);
  const result = events.find((event) => event.type === "tool.result");
  expect(result?.data).toMatchObject({ is_error: false, content: [{ type: "text", text: "counted to 3" }] });
  // live progress came before the stored result
  expect(events.indexOf(progress.at(-1) as never)).toBeLessThan(events.indexOf(result as never));
});

it("reads the calling session with the inspection helper, only until the call returns", async () => {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["look"],
    script: [{ tool_calls: [{ name: "look", arguments: {} }] }, { text: "ok" }],
  });
  const events = storedOnly(await runTurn(client, session.id, "look"));
  const result = events.find((event) => event.type === "tool.result");
  const call = events.find((event) => event.type === "tool.call");
  expect(result?.data.structured_content).toMatchObject({
    session: session.id,
    call: { seq: call?.seq, type: "tool.call" },
  });
  await expect(kept?.events()).rejects.toBeInstanceOf(InspectionError);
  await expect(kept?.events()).rejects.toMatchObject({ status: 401 });
  expect(service.logs()).not.toMatch(/bit_[A-Za-z0-9_-]{20,}/);
});
