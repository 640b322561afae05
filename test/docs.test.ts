import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolManifestSchema } from "../protocol/manifest.js";
import { OUTCOME_CODES } from "../protocol/outcomes.js";
import { createMetrics } from "../src/telemetry/metrics.js";
import { ToolFailure } from "../src/tools/outcome.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { ROOT } from "./helpers/cli.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { waitForEvents } from "./helpers/turns.js";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The repository's own text files a user reads: its Markdown, and what ships beside the code. */
function userFacingFiles(): string[] {
  const skip = new Set(["node_modules", "dist", ".git", "data"]);
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = dir ? `${dir}/${name}` : name;
      if (skip.has(name)) return [];
      if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
      return /\.(md|json|mjs|py)$/.test(name) || path.startsWith("kit/") ? [path] : [];
    });
  return walk("");
}

const markdownFiles = () => userFacingFiles().filter((path) => path.endsWith(".md"));

/** The lines of a Markdown file outside its code blocks. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").filter((line) => {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    return !fenced && !line.trimStart().startsWith("```");
  });
}

/** The anchors GitHub gives a file's headings. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** A Markdown table's rows under the heading `heading`, as cells. */
function tableUnder(markdown: string, heading: string): string[][] {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`));
  const table = section.slice(section.indexOf("\n|")).split("\n\n")[0] as string;
  return table
    .trim()
    .split("\n")
    .slice(2)
    .map((row) =>
      row
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe("the documentation", () => {
  it("cites no document the repository does not have (the design notes are not in it)", async () => {
    const citing = userFacingFiles().filter((path) => /DESIGN|§\d/.test(read(path)));
    expect(citing).toEqual([]);
    expect(await createMetrics().registry.metrics()).not.toMatch(/DESIGN|§/);
  });

  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      for (const line of prose(read(file))) {
        for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (!target || /^(https?|mailto):/.test(target)) continue;
          const [path, anchor] = target.split("#") as [string, string | undefined];
          const linked = path === "" ? file : relative(ROOT, join(ROOT, dirname(file), path));
          if (!existsSync(join(ROOT, linked))) broken.push(`${file}: ${target} (no ${linked})`);
          else if (anchor !== undefined && !anchors(read(linked)).has(anchor))
            broken.push(`${file}: ${target} (no heading #${anchor} in ${linked})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("gives the README a table of contents with every section", () => {
    const readme = read("README.md");
    const contents = readme.slice(readme.indexOf("\n## Contents\n"), readme.indexOf("\n## Quickstart\n"));
    const sections = prose(readme)
      .flatMap((line) => /^## (.+)$/.exec(line)?.[1] ?? [])
      .filter((title) => title !== "Contents");
    expect(sections.length).toBeGreaterThan(5);
    for (const title of sections)
      expect(contents).toContain(`[${title}](#${[...anchors(`## ${title}`)][0]})`);
  });
});

describe("docs/protocol.md", () => {
  const protocol = read("docs/protocol.md");

  it("has Brain's outcomes: every code, and whether the tool may have run", () => {
    const rows = tableUnder(protocol, "## Outcomes");
    const codes = new Set<string>();
    for (const [what, code, unknown] of rows as [string, string, string][]) {
      const name = code.replace(/`/g, "");
      codes.add(name);
      const status = /\b4xx\b/.test(what) ? 404 : /\b5xx\b/.test(what) ? 500 : undefined;
      const failure = new ToolFailure(name as ToolFailure["code"], "", status);
      expect(`${name} ${unknown.split(" ")[0]}`).toBe(`${name} ${failure.unknownOutcome}`);
    }
    expect([...codes].sort()).toEqual([...OUTCOME_CODES].sort());
  });

  it("has the fields of the tool list that brain tools config reads", () => {
    const documented = tableUnder(protocol, "## The tool list").map(([field]) => field?.replace(/`/g, ""));
    const item = ToolManifestSchema.properties.tools.items;
    expect(documented).toEqual(Object.keys(item.properties));
    const required: readonly string[] = item.required ?? [];
    expect(documented.filter((field) => required.includes(field as string))).toEqual([
      "name",
      "description",
      "input_schema",
    ]);
  });

  describe("the request, as a tool service receives it", () => {
    let service: ToolService;
    let brain: TestBrain;
    beforeAll(async () => {
      service = await startToolService({ "/echo": (_call, res) => sendJson(res, textResult("ok")) });
      brain = await startBrain(
        {
          tools: [
            {
              name: "echo",
              description: "echo",
              input_schema: { type: "object" },
              url: service.at("/echo"),
              token_env: "ECHO_TOKEN",
              tenants: ["acme"],
            },
          ],
        },
        { env: { ECHO_TOKEN: "docs-token-7c6b5a" } },
      );
    });
    afterAll(async () => {
      await brain?.stop();
      await service?.close();
    });

    it("has the documented headers, Content-Length always, and the documented body fields", async () => {
      const client = brain.client();
      const session = await client.createSession({
        tools: ["echo"],
        script: [{ tool_calls: [{ name: "echo", arguments: { text: "hi" } }] }, { text: "done" }],
      });
      await fetch(`${brain.url}/sessions/${session.id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${brain.keys.acme}`,
          "content-type": "application/json",
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        },
        body: JSON.stringify({ content: "go" }),
      });
      await waitForEvents(client, session.id, (events) => events.at(-1)?.type === "turn.completed");
      const call = service.calls.at(-1);
      const request = /## The request[\s\S]*?```\n([\s\S]*?)\n\n/.exec(protocol)?.[1] ?? "";
      const documented = request
        .split("\n")
        .slice(1)
        .map((line) => line.split(":")[0]?.toLowerCase());
      expect(Object.keys(call?.headers ?? {}).sort()).toEqual([...(documented as string[])].sort());
      expect(Number(call?.headers["content-length"])).toBe(Buffer.byteLength(JSON.stringify(call?.body)));
      const fields = tableUnder(protocol, "## The request").flatMap(([cell]) =>
        [...(cell ?? "").matchAll(/`(\w+)`/g)].map((m) => m[1]),
      );
      for (const field of Object.keys(call?.body ?? {})) expect(fields).toContain(field);
    });
  });
});
