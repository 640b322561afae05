import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRAIN_BIN } from "./helpers/cli.js";
import { type GatedBrain, startGatedBrain } from "./helpers/gated-tool.js";
import { needs } from "./helpers/host-needs.js";
import { startTerminal, type Terminal } from "./helpers/terminal.js";
import { type FakeModelServer, startFakeModelServer } from "./providers/fake-model-server.js";
import { openAIStall } from "./providers/fake-openai.js";

// `brain chat` in a real pseudo-terminal (tmux), typed at as a person would, against a real Brain
// whose scripted model calls a real tool service that reports progress and waits for the test.

let gated: GatedBrain;
let model: FakeModelServer;
const terminals: Terminal[] = [];

const chat = async (...args: string[]) => {
  const terminal = await startTerminal(
    [process.execPath, BRAIN_BIN, "chat", "--url", gated.brain.url, ...args],
    {
      CHAT_KEY: gated.brain.keys.acme,
    },
  );
  terminals.push(terminal);
  return terminal;
};

/** Wait until the terminal shows `expected`; the screen as it was then. */
async function shows(terminal: Terminal, expected: RegExp | string): Promise<string> {
  let screen = "";
  await expect
    .poll(
      async () => {
        screen = await terminal.screen();
        return typeof expected === "string" ? screen.includes(expected) : expected.test(screen);
      },
      { timeout: 10_000, interval: 100 },
    )
    .toBe(true);
  return screen;
}

describe("brain chat", needs("tmux"), () => {
  beforeAll(async () => {
    model = await startFakeModelServer();
    gated = await startGatedBrain([
      {
        name: "live",
        provider: "openai",
        model: "test-model",
        base_url: `${model.url}/v1`,
        context_window: 128_000,
      },
    ]);
  });
  afterAll(async () => {
    for (const terminal of terminals) await terminal.close();
    await gated?.stop();
    await model?.close();
  });

  it("runs turns live, interrupts with Ctrl-C, and resumes a session with its history", async () => {
    const terminal = await chat("--tools", "slow", "--model", "slow-demo", "--key-env", "CHAT_KEY");
    const opened = await shows(terminal, /session (ses_\w+) · \/help/);
    const sessionId = /session (ses_\w+)/.exec(opened)?.[1] as string;
    await shows(terminal, "model slow-demo · tools: slow");

    await terminal.type("/tools");
    await shows(terminal, "slow: Works a while, reporting progress.");

    // a turn: the call with its arguments, its progress live, then its result and the answer
    await terminal.type("build the thing");
    await shows(terminal, '→ slow {"task":"build the thing"}');
    await shows(terminal, '… {"step":1,"of":2}');
    gated.release();
    await shows(terminal, /← slow ok · \d+(\.\d)? m?s\n\s+slow work done/);
    await shows(terminal, "brain › The tool said: slow work done");

    // Ctrl-C interrupts the running turn, and the chat goes on
    await terminal.type("and again");
    await shows(terminal, '→ slow {"task":"again"}');
    await terminal.press("C-c");
    await shows(terminal, "(interrupting; Ctrl-C again leaves)");
    await shows(terminal, /← slow error cancelled \(unknown outcome: it may have run\)/);
    await shows(terminal, "(interrupted: ");

    await terminal.type("/events");
    await shows(terminal, /\d+ turn\.interrupted/);

    // Ctrl-C with nothing running leaves, and says how to come back
    await terminal.press("C-c");
    await shows(terminal, `resume it with: brain chat --session ${sessionId}`);

    // resumed: the history first, then it takes lines again; /close ends it
    const resumed = await chat("--session", sessionId, "--key-env", "CHAT_KEY");
    const history = await shows(resumed, "(interrupted: ");
    expect(history.indexOf("you › build the thing")).toBeLessThan(history.indexOf("brain › The tool said"));
    expect(history.indexOf("brain › The tool said")).toBeLessThan(history.indexOf("you › and again"));
    await resumed.type("/close");
    await shows(resumed, "session closed");
    await shows(resumed, `left session ${sessionId}`);
    expect((await gated.brain.client().getSession(sessionId)).status).toBe("closed");
  });

  it("writes the model's text as it streams, and Ctrl-C stops the model mid-sentence", async () => {
    model.enqueue(openAIStall("Let me think about th"));
    const terminal = await chat("--model", "live", "--key-env", "CHAT_KEY");
    await shows(terminal, "model live · tools: none");
    await terminal.type("think out loud");
    await shows(terminal, "brain › Let me think about th");
    await terminal.press("C-c");
    await shows(terminal, /brain › Let me think about th\n[\s\S]*\(interrupted: /);
    await terminal.press("C-d");
    await shows(terminal, "left session");
  });

  it("answers a call that waited for approval before the chat was resumed", async () => {
    const client = gated.brain.client();
    const session = await client.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [{ name: "guarded", arguments: {} }] }, { text: "approved: {{result}}" }],
    });
    await client.sendMessage(session.id, "go");
    await expect
      .poll(async () =>
        (await client.events(session.id)).some((event) => event.type === "tool.approval_requested"),
      )
      .toBe(true);

    const resumed = await chat("--session", session.id, "--key-env", "CHAT_KEY");
    await shows(resumed, "? guarded waits for your approval");
    await resumed.type("/approve");
    await shows(resumed, /← guarded ok/);
    await shows(resumed, "brain › approved: guarded work done");
    await resumed.press("C-d");
    await shows(resumed, "left session");
  });

  it("refuses what it cannot do, saying why", async () => {
    const terminal = await chat("--session", "ses_x", "--tools", "slow", "--key-env", "CHAT_KEY");
    await shows(terminal, "brain chat: --tools and --model choose a new session's");
    const missing = await chat("--key-env", "NOT_SET");
    await shows(missing, "brain chat: set NOT_SET to your tenant's API key");
  });
});
