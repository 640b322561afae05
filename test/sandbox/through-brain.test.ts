import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolManifest } from "../../kit/index.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { needs } from "../helpers/host-needs.js";
import { ofType, runTurn } from "../helpers/turns.js";
import { eventually, marker, processesWith, startTestSandbox, type TestSandbox } from "./sandbox-service.js";

let sandbox: TestSandbox;
let brain: TestBrain;

beforeAll(async () => {
  sandbox = await startTestSandbox(140_000);
  // the bindings as an operator writes them: the service's own schemas, its URL, the token's variable
  const manifest = await request(`${sandbox.url}/tools`, {
    headers: { authorization: `Bearer ${sandbox.token}` },
  }).then((response) => response.body.json() as Promise<ToolManifest>);
  const tools = manifest.tools.map((tool) => ({
    ...tool,
    url: `${sandbox.url}/tools/${tool.name}`,
    token_env: "SANDBOX_TOOLS_KEY",
    tenants: ["acme"],
  }));
  brain = await startBrain({ tools }, { env: { SANDBOX_TOOLS_KEY: sandbox.token } });
});

afterAll(async () => {
  await brain?.stop();
  await sandbox?.close();
});

describe("the sandbox through a real Brain", needs("sandbox"), () => {
  it("runs sandbox_exec with its output live as tool.progress, then the result the model reads", async () => {
    const client = brain.client();
    const code = "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(0.15)";
    const session = await client.createSession({
      tools: ["sandbox_exec"],
      script: [
        { tool_calls: [{ name: "sandbox_exec", arguments: { language: "python", code } }] },
        { text: "{{result}}" },
      ],
    });
    const events = await runTurn(client, session.id, "count to three");
    const progress = events.filter((event) => event.type === "tool.progress").map((event) => event.data.data);
    expect(progress).toEqual([
      { stream: "stdout", text: "line 0\n" },
      { stream: "stdout", text: "line 1\n" },
      { stream: "stdout", text: "line 2\n" },
    ]);
    const result = events.find((event) => event.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: false,
      structured_content: {
        exit_code: 0,
        stdout: "line 0\nline 1\nline 2\n",
        truncated: false,
        timed_out: false,
      },
    });
    const answer = ofType(events, "message.assistant").find((event) => event.data.text !== "");
    expect(answer?.data.text).toMatch(/^exit code 0, \d+ ms\n--- stdout ---\nline 0\n/);
    // files written by one call are there for the next, in the same session
    const next = await client.createSession({
      tools: ["sandbox_exec", "sandbox_read_file"],
      script: [
        {
          tool_calls: [
            { name: "sandbox_exec", arguments: { language: "bash", code: "echo kept > note.txt" } },
          ],
        },
        { tool_calls: [{ name: "sandbox_read_file", arguments: { path: "note.txt" } }] },
        { text: "{{result}}" },
      ],
    });
    const read = await runTurn(client, next.id, "write then read");
    expect(read.findLast((event) => event.type === "tool.result")?.data).toMatchObject({
      structured_content: { content: "kept\n" },
    });
  });

  it("kills the sandbox when the session is interrupted", async () => {
    const client = brain.client();
    const tag = marker();
    const session = await client.createSession({
      tools: ["sandbox_exec"],
      script: [
        {
          tool_calls: [{ name: "sandbox_exec", arguments: { language: "bash", code: `sleep 600.${tag}` } }],
        },
        { text: "never" },
      ],
    });
    const turn = runTurn(client, session.id, "sleep");
    await eventually(() => processesWith(tag).length > 0, 5000, "the sandbox is running");
    await client.interrupt(session.id);
    const events = await turn;
    expect(events.at(-1)?.type).toBe("turn.interrupted");
    expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      error: { code: "cancelled" },
    });
    await eventually(
      () => processesWith(tag).length === 0,
      3000,
      "the interrupted call's processes are gone",
    );
  });

  it("keeps the sandbox token out of Brain's events and logs and the service's logs", async () => {
    const client = brain.client();
    for (const session of (await client.listSessions()).sessions) {
      expect(JSON.stringify(await client.events(session.id))).not.toContain(sandbox.token);
    }
    expect(brain.logs()).not.toContain(sandbox.token);
    expect(sandbox.logs()).not.toContain(sandbox.token);
  });
});
