import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../protocol/events.js";
import { run as replay } from "../../src/cli/replay-command.js";
import type { BrainClient } from "../../src/client/client.js";
import type { HistoryEntry } from "../../src/context/history.js";
import { ESTIMATE, requestTokens } from "../../src/context/tokens.js";
import { ConversationFold } from "../../src/turns/conversation.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";

const TURNS = 200;
const WINDOW = 1500;
const RESERVE = 100;
// threshold 0.8 of the window, less the answer's room
const ROOM = 0.8 * WINDOW - RESERVE;

const textSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const echo = { name: "echo", description: "The echo tool.", input_schema: textSchema };
const script = Array.from({ length: TURNS }, () => [
  { tool_calls: [{ name: "echo", arguments: { text: "{{message}}" } }] },
  { text: "done: {{message}}" },
]).flat();

let tools: ToolService;
let brain: TestBrain;
let client: BrainClient;

beforeAll(async () => {
  tools = await startToolService({
    "/echo": (call, res) =>
      sendJson(
        res,
        textResult(`${(call.body.arguments as { text: string }).text} ${"and so on ".repeat(20)}`),
      ),
  });
  brain = await startBrain({
    models: [
      { name: "default", provider: "scripted", context_window: WINDOW, max_output_tokens: RESERVE },
      { name: "replay", provider: "scripted" },
      {
        name: "truncating",
        provider: "scripted",
        context_window: WINDOW,
        max_output_tokens: RESERVE,
        context: { strategy: "truncate" },
      },
    ],
    tools: [{ ...echo, url: tools.at("/echo"), tenants: ["acme"] }],
  });
  client = brain.client();
});

afterAll(async () => {
  await brain?.stop();
  await tools?.close();
});

/** Every assistant message with calls is followed by exactly its results, and every result by its call. */
function pairsIntact(entries: readonly HistoryEntry[]): boolean {
  for (const [i, { message }] of entries.entries()) {
    const next = entries[i + 1]?.message;
    if (message.role === "assistant" && message.tool_calls.length > 0) {
      if (next?.role !== "tool") return false;
      const asked = message.tool_calls.map((call) => call.call_id);
      if (JSON.stringify(next.results.map((result) => result.call_id)) !== JSON.stringify(asked))
        return false;
    }
    if (message.role === "tool" && entries[i - 1]?.message.role !== "assistant") return false;
  }
  return true;
}

describe("a scripted session of hundreds of turns in a small window", () => {
  let sessionId: string;
  let events: StoredEvent[];

  beforeAll(async () => {
    const session = await client.createSession({ tools: ["echo"], script });
    sessionId = session.id;
    for (let turn = 1; turn <= TURNS; turn++) {
      await client.sendMessage(sessionId, `message ${turn}`);
      await waitIdle(client, sessionId);
    }
    events = await client.events(sessionId, { limit: 10_000 });
  }, 120_000);

  it("completes every turn, compacting again and again, and the log keeps every event", () => {
    expect(events.filter((event) => event.type === "turn.completed")).toHaveLength(TURNS);
    expect(events.filter((event) => event.type === "turn.failed")).toEqual([]);
    const compactions = events.filter((event) => event.type === "context.compacted");
    expect(compactions.length).toBeGreaterThan(10);
    expect(events.filter((event) => event.type === "tool.result")).toHaveLength(TURNS);
    expect(events.filter((event) => event.type === "message.user")).toHaveLength(TURNS);
  });

  it("sends every model call a conversation under the window, with its question and every call beside its result", () => {
    const fold = new ConversationFold({ counter: ESTIMATE, forModel: (result) => result });
    const overhead = requestTokens(ESTIMATE, undefined, [echo]);
    let calls = 0;
    let latestUser = "";
    for (const event of events) {
      if (event.type === "message.user") latestUser = event.data.content;
      if (event.type === "message.assistant") {
        // what the model was sent for this step: the log folded up to it
        const history = fold.history();
        expect(history.tokens(overhead)).toBeLessThanOrEqual(ROOM);
        expect(pairsIntact(history.entries())).toBe(true);
        expect(history.messages()).toContainEqual({ role: "user", content: latestUser });
        calls++;
      }
      fold.push(event);
    }
    expect(calls).toBe(2 * TURNS);
  });

  it("is replayed by `brain replay` with its compactions as recorded: the same events, so the same requests", async () => {
    const out = { stdout: "", stderr: "" };
    const code = await replay([sessionId, "--model", "replay", "--url", brain.url], {
      stdout: (text) => {
        out.stdout += text;
      },
      stderr: (text) => {
        out.stderr += text;
      },
      env: { BRAIN_API_KEY: brain.keys.acme },
    });
    expect(out.stdout).toMatch(/no differences\n$/);
    expect(code).toBe(0);
  }, 120_000);
});

describe('context.strategy "truncate"', () => {
  it("leaves the oldest whole turns out with a note, and no model call", async () => {
    const session = await client.createSession({
      model: "truncating",
      tools: ["echo"],
      script: script.slice(0, 80),
    });
    for (let turn = 1; turn <= 40; turn++) {
      await client.sendMessage(session.id, `message ${turn}`);
      await waitIdle(client, session.id);
    }
    const events = await client.events(session.id, { limit: 10_000 });
    expect(events.filter((event) => event.type === "turn.completed")).toHaveLength(40);
    const truncations = events.flatMap((event) => (event.type === "context.compacted" ? [event.data] : []));
    expect(truncations.length).toBeGreaterThan(2);
    for (const data of truncations) {
      expect(data).toMatchObject({ strategy: "truncate", usage: { input_tokens: 0, output_tokens: 0 } });
      // each note counts every turn left out so far, those of the note it replaces included
      const turns = events.filter((event) => event.type === "message.user" && event.seq <= data.through_seq);
      expect(data.summary).toBe(
        `[${turns.length} earlier turn${turns.length === 1 ? " was" : "s were"} left out here to fit the model's context window; the session's events keep them all.]`,
      );
    }
  }, 60_000);
});

async function waitIdle(client: BrainClient, sessionId: string): Promise<void> {
  for (;;) {
    if ((await client.getSession(sessionId)).status === "idle") return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
