import type { ServerResponse } from "node:http";
import { startBrain, type TestBrain } from "./brain.js";
import { startToolService, type ToolService } from "./tool-service.js";

/**
 * A Brain whose `slow` tool reports progress and then waits until the test lets it finish, and
 * whose `guarded` tool is sent only once a person approves it.
 */
export interface GatedBrain {
  brain: TestBrain;
  /** Let the oldest waiting call of `slow` finish: a second progress event, then its result. */
  release: () => void;
  stop: () => Promise<void>;
}

const TOOL_TOKEN = "gated-tool-token-8c1d";

function progress(res: ServerResponse, data: unknown): void {
  res.write(`event: progress\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * A real Brain with the tool `slow` (a real tool service answering with an event stream) and the
 * scripted model `slow-demo`: its turns call `slow` with the message, say what it answered, then
 * call `slow` once more. `models` are added to the host config's.
 */
export async function startGatedBrain(models: Record<string, unknown>[] = []): Promise<GatedBrain> {
  const gates: (() => void)[] = [];
  const tools: ToolService = await startToolService({
    "/tools/guarded": (_call, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ content: [{ type: "text", text: "guarded work done" }] }));
    },
    "/tools/slow": async (call, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      progress(res, { step: 1, of: 2 });
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        call.closed.then(resolve);
      });
      if (res.destroyed) return;
      progress(res, { step: 2, of: 2 });
      res.end(
        `event: result\ndata: ${JSON.stringify({ content: [{ type: "text", text: "slow work done" }] })}\n\n`,
      );
    },
  });
  const brain = await startBrain(
    {
      models: [
        { name: "default", provider: "scripted" },
        {
          name: "slow-demo",
          provider: "scripted",
          script: [
            { tool_calls: [{ name: "slow", arguments: { task: "{{message}}" } }] },
            { text: "The tool said: {{result}}" },
            { tool_calls: [{ name: "slow", arguments: { task: "again" } }] },
          ],
        },
        ...models,
      ],
      tools: [
        {
          name: "slow",
          description: "Works a while, reporting progress.",
          input_schema: { type: "object", properties: { task: { type: "string" } } },
          url: tools.at("/tools/slow"),
          token_env: "SLOW_TOKEN",
          tenants: ["acme"],
        },
        {
          name: "guarded",
          description: "Does nothing until a person approves.",
          input_schema: { type: "object" },
          url: tools.at("/tools/guarded"),
          tenants: ["acme"],
          approval: "always",
        },
      ],
    },
    { env: { SLOW_TOKEN: TOOL_TOKEN } },
  ).catch(async (error: unknown) => {
    await tools.close();
    throw error;
  });
  return {
    brain,
    release: () => gates.shift()?.(),
    stop: async () => {
      for (const open of gates.splice(0)) open();
      await brain.stop();
      await tools.close();
    },
  };
}
