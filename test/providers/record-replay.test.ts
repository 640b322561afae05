import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as replay } from "../../src/cli/replay-command.js";
import { run as script } from "../../src/cli/script-command.js";
import type { BrainClient, StoredEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { runBrain } from "../helpers/cli.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { runTurn } from "../helpers/turns.js";
import { PROVIDER_KEY } from "./conformance.js";
import { anthropicError, anthropicReply } from "./fake-anthropic.js";
import { type FakeModelServer, startFakeModelServer } from "./fake-model-server.js";

let fake: FakeModelServer;
let tools: ToolService;
let brain: TestBrain;
let client: BrainClient;
/** The tool service as changed by its author after the session was recorded. */
let shouting = false;
let recordedId: string;
let dir: string;

const textSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
/** The tool bindings of every Brain here: a replay needs the same tools, wherever it runs. */
const bindings = () =>
  ["echo", "weather"].map((name) => ({
    name,
    description: `The ${name} tool.`,
    input_schema: textSchema,
    url: tools.at(`/${name}`),
    tenants: ["acme"],
  }));

beforeAll(async () => {
  fake = await startFakeModelServer();
  tools = await startToolService({
    "/echo": (call, res) => {
      const text = (call.body.arguments as { text: string }).text;
      sendJson(res, textResult(shouting ? text.toUpperCase() : text));
    },
    "/weather": (_call, res) => sendJson(res, { structured_content: { city: "Oslo", celsius: -3 } }),
  });
  brain = await startBrain(
    {
      models: [
        {
          name: "claude",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          api_key_env: "PROVIDER_KEY",
          base_url: fake.url,
        },
        { name: "replay", provider: "scripted" },
      ],
      tools: bindings(),
    },
    { env: { PROVIDER_KEY } },
  );
  client = brain.client();
  dir = mkdtempSync(join(tmpdir(), "brain-recording-"));

  // a real session against the provider: parallel calls, a call cut off at max_tokens, two turns
  fake.enqueue(
    anthropicReply({
      text: "Let me look.",
      tools: [
        { id: "toolu_a", name: "echo", input: { text: "hello" } },
        { id: "toolu_b", name: "weather", input: { text: "Oslo" } },
      ],
      usage: { input: 30, output: 12 },
    }),
    anthropicReply({ text: "It is -3 in Oslo.", usage: { input: 60, output: 8 } }),
    anthropicReply({
      tools: [{ id: "toolu_c", name: "echo", input: {}, raw: '{"text": "cut' }],
      stop_reason: "max_tokens",
      usage: { input: 80, output: 4096 },
    }),
    anthropicReply({ text: "Sorry, that was cut off.", usage: { input: 90, output: 9 } }),
  );
  const session = await client.createSession({
    model: "claude",
    tools: ["echo", "weather"],
    system: "Be brief.",
  });
  recordedId = session.id;
  await runTurn(client, recordedId, "weather please");
  await runTurn(client, recordedId, "echo something long");
});

afterAll(async () => {
  await brain?.stop();
  await tools?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Run a command in this process, against a Brain (the one above) over HTTP, capturing what it prints. */
async function command(
  run: typeof script,
  args: string[],
  env: Record<string, string> = {},
  target: TestBrain = brain,
) {
  const out = { stdout: "", stderr: "" };
  const code = await run([...args, "--url", target.url], {
    stdout: (text) => {
      out.stdout += text;
    },
    stderr: (text) => {
      out.stderr += text;
    },
    env: { BRAIN_API_KEY: target.keys.acme, ...env },
  });
  return { code, ...out };
}

/** Events as a replay must reproduce them: ids, times and durations differ on every run. */
function withoutRunIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRunIds);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !["call_id", "provider_call_id", "duration_ms"].includes(key))
        .map(([key, item]) => [key, withoutRunIds(item)]),
    );
  }
  return value;
}
const turnsOf = (events: StoredEvent[]) =>
  events
    .filter((e) => e.type !== "session.created")
    .map((e) => ({ type: e.type, data: withoutRunIds(e.data) }));

describe("brain script", () => {
  it("prints the session's model steps as a script that replays to the same events", async () => {
    const printed = await command(script, [recordedId]);
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    const steps = JSON.parse(printed.stdout);
    expect(steps).toEqual([
      {
        text: "Let me look.",
        tool_calls: [
          { name: "echo", arguments: { text: "hello" } },
          { name: "weather", arguments: { text: "Oslo" } },
        ],
        usage: { input_tokens: 30, output_tokens: 12 },
      },
      { text: "It is -3 in Oslo.", usage: { input_tokens: 60, output_tokens: 8 } },
      {
        tool_calls: [{ name: "echo", arguments: '{"text": "cut' }],
        stop_reason: "max_tokens",
        usage: { input_tokens: 80, output_tokens: 4096 },
      },
      { text: "Sorry, that was cut off.", usage: { input_tokens: 90, output_tokens: 9 } },
    ]);

    const requestsBefore = fake.requests.length;
    const session = await client.createSession({
      model: "replay",
      tools: ["echo", "weather"],
      system: "Be brief.",
      script: steps,
    });
    await runTurn(client, session.id, "weather please");
    await runTurn(client, session.id, "echo something long");
    const recorded = turnsOf(await client.events(recordedId));
    expect(turnsOf(await client.events(session.id))).toEqual(recorded);
    expect(recorded.map((e) => e.type)).toContain("tool.result");
    expect(fake.requests.length).toBe(requestsBefore);
  });

  it("says what is wrong: no key, an unknown session, a missing argument", async () => {
    expect(await command(script, [recordedId], { BRAIN_API_KEY: "" })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("set BRAIN_API_KEY"),
    });
    expect(await command(script, ["ses_unknown"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("not_found"),
    });
    expect(await command(script, [])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("SESSION_ID"),
    });
    expect(await command(replay, [recordedId])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--model is required"),
    });
  });

  it("is a brain subcommand with its own help", () => {
    for (const name of ["script", "replay"]) {
      const help = runBrain([name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`brain ${name} SESSION_ID`);
    }
    expect(runBrain(["--help"]).stdout).toMatch(/brain script SESSION_ID[\s\S]*brain replay SESSION_ID/);
  });
});

describe("brain replay", () => {
  it("replays a session with the scripted model and finds no difference while the tools are unchanged", async () => {
    const requestsBefore = fake.requests.length;
    const result = await command(replay, [recordedId, "--model", "replay"]);
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/replaying .* as ses_\w+: 2 messages, 4 model steps\nno differences\n$/),
    });
    expect(fake.requests.length).toBe(requestsBefore);
  });

  it("replays a session with failed turns: each ends where it ended, and the turns after it line up", async () => {
    // turn 1 fails after a tool call (a 400 is not retried), turn 2 fails at once, turn 3 completes
    fake.enqueue(
      anthropicReply({ tools: [{ id: "toolu_f", name: "echo", input: { text: "first" } }] }),
      anthropicError(400, "invalid_request_error", "messages: text content blocks must be non-empty"),
      anthropicError(400, "invalid_request_error", "messages: text content blocks must be non-empty"),
      anthropicReply({ tools: [{ id: "toolu_g", name: "echo", input: { text: "third" } }] }),
      anthropicReply({ text: "Done." }),
    );
    const session = await client.createSession({ model: "claude", tools: ["echo"] });
    for (const message of ["one", "two", "three"]) await runTurn(client, session.id, message);
    const ends = (await client.events(session.id)).filter((e) => e.type.startsWith("turn."));
    expect(ends.map((e) => e.type)).toEqual([
      "turn.started",
      "turn.failed",
      "turn.started",
      "turn.failed",
      "turn.started",
      "turn.completed",
    ]);

    const requestsBefore = fake.requests.length;
    const result = await command(replay, [session.id, "--model", "replay"]);
    expect(result.stderr).toContain("turn 1 failed (provider_rejected): a replay ends it there");
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/: 3 messages, 5 model steps\nno differences\n$/),
    });
    expect(fake.requests.length).toBe(requestsBefore);
    // the third turn played its own steps: its echo call went out with its own arguments
    const replayId = /as (ses_\w+)/.exec(result.stdout)?.[1] ?? "";
    const replayedCalls = (await client.events(replayId)).filter((e) => e.type === "tool.call");
    expect(replayedCalls.map((e) => e.data.arguments)).toEqual([{ text: "first" }, { text: "third" }]);
  });

  it("refuses a model that is not scripted, before anything reaches its provider", async () => {
    const requestsBefore = fake.requests.length;
    const sessionsBefore = (await client.listSessions({ limit: 100 })).sessions.length;
    const result = await command(replay, [recordedId, "--model", "claude"]);
    expect(result).toMatchObject({
      code: 1,
      stdout: "",
      stderr: expect.stringMatching(/^brain replay: .*--model claude: invalid_request: config\.script: /),
    });
    expect(fake.requests.length).toBe(requestsBefore);
    expect((await client.listSessions({ limit: 100 })).sessions.length).toBe(sessionsBefore);
  });

  it("replays a file of `brain script --out` on another Brain: no key, no provider, no copy of the store", async () => {
    const path = join(dir, "weather.json");
    const written = await command(script, [recordedId, "--out", path]);
    expect(written).toMatchObject({
      code: 0,
      stderr: "",
      stdout: expect.stringContaining(`wrote ${path}: 2 messages, 4 model steps;`),
    });
    const file = JSON.parse(readFileSync(path, "utf8"));
    expect(file).toMatchObject({
      brain_recording: 1,
      session_id: recordedId,
      config: { tools: ["echo", "weather"], system: "Be brief.", max_steps: 32 },
      messages: ["weather please", "echo something long"],
      script: JSON.parse((await command(script, [recordedId])).stdout),
    });

    // the tool author's laptop: the scripted model only, the same tools, its own empty store
    const laptop = await startBrain({ tools: bindings() });
    try {
      const requestsBefore = fake.requests.length;
      const result = await command(replay, [path, "--model", "default"], {}, laptop);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout.startsWith(`replaying ${path} (${recordedId}) as ses_`)).toBe(true);
      expect(result.stdout).toMatch(/: 2 messages, 4 model steps\nno differences\n$/);
      shouting = true;
      const changed = await command(replay, [path, "--model", "default"], {}, laptop);
      expect(changed.code).toBe(1);
      expect(changed.stdout).toContain('replayed: tool.result {"content":[{"text":"HELLO","type":"text"}]');
      expect(fake.requests.length).toBe(requestsBefore);
    } finally {
      shouting = false;
      await laptop.stop();
    }
  });

  it("says what is wrong with a file that is not a recording", async () => {
    const path = join(dir, "not-a-recording.json");
    writeFileSync(path, JSON.stringify({ messages: ["hi"], script: [] }));
    expect(await command(replay, [path, "--model", "replay"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("brain_recording: is required"),
    });
    expect(await command(replay, [join(dir, "missing.json"), "--model", "replay"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("cannot read"),
    });
  });

  it("shows what a changed tool service now answers differently, and exits 1", async () => {
    shouting = true;
    try {
      const result = await command(replay, [recordedId, "--model", "replay"]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        'recorded: tool.result {"content":[{"text":"hello","type":"text"}],"is_error":false,"name":"echo"}',
      );
      expect(result.stdout).toContain(
        'replayed: tool.result {"content":[{"text":"HELLO","type":"text"}],"is_error":false,"name":"echo"}',
      );
      expect(result.stdout).toMatch(/\n1 event differs\n$/);
    } finally {
      shouting = false;
    }
  });
});
