import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { ROOT } from "../helpers/cli.js";
import { runTurn } from "../helpers/turns.js";

const TOKEN = "python-token-1a2b3c4d";
let python: ReturnType<typeof spawn>;
let brain: TestBrain;

beforeAll(async () => {
  python = spawn("python3", ["examples/tools/server.py"], {
    cwd: ROOT,
    env: { ...process.env, BRAIN_TOOLS_KEY: TOKEN, PORT: "0" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    python.once("exit", (code) => reject(new Error(`python exited with ${code}`)));
    createInterface({ input: python.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
  });
  const binding = (name: string) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: `${url}/tools/${name}`,
    token_env: "PY_TOKEN",
    tenants: ["acme"],
  });
  brain = await startBrain({ tools: [binding("echo"), binding("countdown")] }, { env: { PY_TOKEN: TOKEN } });
});

afterAll(async () => {
  await brain?.stop();
  python?.kill();
});

it("a Python standard-library service answers JSON and streams SSE progress through Brain", async () => {
  const client = brain.client();
  const session = await client.createSession({
    tools: ["echo", "countdown"],
    script: [
      {
        tool_calls: [
          { name: "echo", arguments: { text: "from python" } },
          { name: "countdown", arguments: { from: 3 } },
        ],
      },
      { text: "{{result}}" },
    ],
  });
  const events = await runTurn(client, session.id, "go");
  const results = events.filter((e) => e.type === "tool.result").map((e) => e.data);
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  expect(byName.echo).toMatchObject({ is_error: false, content: [{ type: "text", text: "from python" }] });
  expect(byName.countdown).toMatchObject({
    is_error: false,
    content: [{ text: "liftoff" }],
    structured_content: { counted: 3 },
  });
  const progress = events
    .filter((e) => e.type === "tool.progress")
    .map((e) => (e.data.data as { remaining: number }).remaining);
  expect(progress).toEqual([3, 2, 1]);
  expect(events.at(-2)).toMatchObject({ type: "message.assistant", data: { text: "liftoff" } });
});

it("is the service the README shows for tool authors, as it is", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const shown = /```python\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(shown).toBeDefined();
  expect(readFileSync(join(ROOT, "examples/tools/server.py"), "utf8")).toContain(shown);
});
