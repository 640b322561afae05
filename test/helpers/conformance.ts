import { request } from "undici";
import { expect } from "vitest";
import type { ToolManifest } from "../../kit/index.js";
import { checkToolService } from "../../src/tools-check/check.js";

/** A kit service that answers on `url` with `token`, and whose log the test can read. */
export interface CheckedService {
  url: string;
  token: string;
  logs: () => string;
}

/** How the kit answered each call it logged since offset `from`: `{tool, outcome}`, outcome "ok" for a success, "is_error" or "threw" for a refusal. */
export function answeredSince(log: string, from: number): { tool?: string; outcome?: string }[] {
  return log
    .slice(from)
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; tool?: string; outcome?: string })
    .filter((entry) => entry.msg === "tool call answered")
    .map(({ tool, outcome }) => ({ tool, outcome }));
}

/**
 * Run `brain tools check` on one tool of a kit service, with the output schema its manifest
 * publishes, and expect every rule to pass and the service to have answered `outcome` (an error
 * result passes the rules too, so this shows the rules judged the tool doing its work).
 */
export async function expectConformance(
  service: CheckedService,
  tool: string,
  args: Record<string, unknown>,
  outcome: "ok" | "is_error" | "threw" = "ok",
): Promise<void> {
  const manifest = (await (
    await request(`${service.url}/tools`, { headers: { authorization: `Bearer ${service.token}` } })
  ).body.json()) as ToolManifest;
  const outputSchema = manifest.tools.find((entry) => entry.name === tool)?.output_schema;
  const from = service.logs().length;
  const outcomes = await checkToolService(`${service.url}/tools/${tool}`, {
    token: service.token,
    arguments: args,
    afterResultMs: 300,
    ...(outputSchema && { outputSchema }),
  });
  expect(outcomes.filter((each) => !each.pass)).toEqual([]);
  // the service logs after it answers, and its output reaches this process through a pipe
  await expect.poll(() => answeredSince(service.logs(), from)).toEqual([{ tool, outcome }]);
}
