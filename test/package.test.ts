import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { ROOT } from "./helpers/cli.js";

// Brain as a user's project gets it: the packed tarball installed into a scratch project, its three
// entry points imported from there (JavaScript and TypeScript), and `npx brain` run.

const run = promisify(execFile);
/** Brain's server needs these; a tool author's or an app's install must not get them. */
const SERVER_ONLY = [
  "better-sqlite3",
  "pg",
  "openai",
  "@anthropic-ai/sdk",
  "@aws-sdk/client-s3",
  "@modelcontextprotocol/sdk",
];

let dir = "";
let project = "";
let brain: TestBrain;

const npm = (args: string[], cwd: string) =>
  run("npm", args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      TMPDIR: tmpdir(),
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    },
    timeout: 240_000,
  });

describe("the package", { timeout: 300_000 }, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "brain-pack-"));
    project = join(dir, "project");
    // dist/ is built (npm test builds first): packing without scripts leaves it as the tests read it
    const packed = await npm(["pack", "--ignore-scripts", "--pack-destination", dir], ROOT);
    const tarball = join(dir, packed.stdout.trim().split("\n").at(-1) as string);
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "scratch", private: true, type: "module" }),
    );
    // the registry is asked only for what npm's cache lacks (after `npm ci`, the versions' metadata)
    await npm(["install", "--prefer-offline", "--omit=optional", "--ignore-scripts", tarball], project);
    brain = await startBrain({});
  }, 300_000);

  afterAll(async () => {
    await brain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("installs without the server's dependencies when optional ones are left out", () => {
    const modules = join(project, "node_modules");
    expect(existsSync(join(modules, "brain", "dist", "src", "client", "index.js"))).toBe(true);
    for (const name of SERVER_ONLY) expect(existsSync(join(modules, name)), name).toBe(false);
    // sources, tests and benchmarks stay in the repository; the compiled code and its types ship
    const shipped = readdirSync(join(modules, "brain"), { recursive: true }).map(String);
    expect(
      shipped.filter((path) => /\.test\.|(^|\/)bench\/|\.ts$/.test(path) && !path.endsWith(".d.ts")),
    ).toEqual([]);
    expect(shipped).toContain(join("dist", "web", "console", "console.js"));
  });

  it("gives brain/client, brain/kit and brain/protocol to JavaScript, working against a real Brain", async () => {
    writeFileSync(
      join(project, "use.mjs"),
      `import { BrainClient, formatEvent } from "brain/client";
import { defineTool, serve } from "brain/kit";
import { SessionEventSchema, check, compile } from "brain/protocol";
import { Type } from "@sinclair/typebox";

const client = new BrainClient(process.env.BRAIN_URL, process.env.BRAIN_API_KEY);
const session = await client.createSession();
const stream = client.streamEvents(session.id);
const first = stream.next();
await client.sendMessage(session.id, "hello from a user's project");
for (let next = await first; !next.done; next = await stream.next()) {
  console.log(formatEvent(next.value));
  if (next.value.type === "turn.completed") break;
}
await stream.return(undefined);
const event = (await client.events(session.id))[0];
console.log("protocol:", check(compile(SessionEventSchema), event).ok);

const shout = defineTool({
  name: "shout",
  description: "Upper-cases text.",
  input: Type.Object({ text: Type.String() }),
  handler: ({ text }) => text.toUpperCase(),
});
const service = await serve({ tools: [shout], token: "pack-test-token" });
const answer = await fetch(service.url + "/tools/shout", {
  method: "POST",
  headers: { authorization: "Bearer pack-test-token", "content-type": "application/json" },
  body: JSON.stringify({ tenant_id: "t", session_id: "s", call_id: "c", arguments: { text: "hi" } }),
});
console.log("kit:", JSON.stringify(await answer.json()));
await service.close();
`,
    );
    const { stdout } = await run(process.execPath, ["use.mjs"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", BRAIN_URL: brain.url, BRAIN_API_KEY: brain.keys.acme },
      timeout: 30_000,
    });
    expect(stdout).toMatch(/message\.user\s+"hello from a user's project"/);
    expect(stdout).toMatch(/turn\.completed\s+end_turn/);
    expect(stdout).toContain("protocol: true");
    expect(stdout).toContain('kit: {"content":[{"type":"text","text":"HI"}]}');
  });

  it("gives them to TypeScript with their types", async () => {
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ["*.ts"],
      }),
    );
    writeFileSync(
      join(project, "typed.ts"),
      `import { BrainClient, type SessionEvent } from "brain/client";
import { defineTool } from "brain/kit";
import { type StoredEvent, ERROR_CODES } from "brain/protocol";

export async function lastText(client: BrainClient, id: string): Promise<string> {
  for await (const event of client.streamEvents(id)) {
    // narrowed by type: data is typed
    if (event.type === "message.assistant") return event.data.text;
  }
  return "";
}
export const seqOf = (event: StoredEvent): number => event.seq;
export const codes: readonly string[] = ERROR_CODES;
export type Any = SessionEvent;
export const tool = defineTool;
// @ts-expect-error a session id is a string
new BrainClient("http://127.0.0.1:8080", "key").getSession(42);
`,
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "."], { cwd: project, timeout: 60_000 }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe("");
  });

  it("runs `npx brain --help` from the project", async () => {
    const { stdout } = await run("npx", ["--offline", "brain", "--help"], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        npm_config_update_notifier: "false",
      },
      timeout: 30_000,
    });
    expect(stdout).toContain("brain — an agent server");
  });

  it("says what is missing when asked to serve without the server's dependencies", async () => {
    writeFileSync(
      join(project, "brain.json"),
      JSON.stringify({
        listen: "127.0.0.1:0",
        store: { kind: "sqlite", path: "brain.db" },
        tenants: [{ id: "local", api_key_env: "BRAIN_API_KEY" }],
        models: [{ name: "default", provider: "scripted" }],
      }),
    );
    const failed = await run("npx", ["--offline", "brain", "-config", "brain.json"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, BRAIN_API_KEY: "k".repeat(32) },
      timeout: 30_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect("code" in failed && failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^brain: Brain's server needs the package's optional dependencies, and [\w@/-]+ is not installed: install brain again without --omit=optional\n$/,
    );
  });
});
