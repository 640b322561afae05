import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { defineTool, type Tool } from "../../kit/index.js";

/** `wait`: sleeps, reporting progress every `progressMs`, and stops as soon as the caller goes away. */
export function waitTool(options: { maxSeconds: number; progressMs: number }): Tool {
  return defineTool({
    name: "wait",
    description: `Wait the given number of seconds (at most ${options.maxSeconds}), reporting progress as it goes.`,
    input: Type.Object(
      { seconds: Type.Number({ minimum: 0, maximum: options.maxSeconds, description: "How long to wait." }) },
      { additionalProperties: false },
    ),
    output: Type.Object({ waited_seconds: Type.Number() }, { additionalProperties: false }),
    streaming: true,
    timeoutSeconds: Math.min(86_400, Math.ceil(options.maxSeconds) + 30),
    handler: async ({ seconds }, ctx) => {
      const totalMs = seconds * 1000;
      const started = performance.now();
      for (;;) {
        const elapsed = performance.now() - started;
        if (elapsed >= totalMs) break;
        // a rejected sleep (the caller went away) ends the handler: nothing more to do
        await sleep(Math.min(options.progressMs, totalMs - elapsed), undefined, { signal: ctx.signal });
        const now = performance.now() - started;
        if (now < totalMs) {
          ctx.progress({ elapsed_seconds: round(now / 1000), total_seconds: seconds });
        }
      }
      return {
        content: [{ type: "text", text: `Waited ${seconds} seconds.` }],
        structured_content: { waited_seconds: seconds },
      };
    },
  });
}

const round = (value: number) => Math.round(value * 10) / 10;
