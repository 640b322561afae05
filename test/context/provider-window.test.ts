import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrainClient, StoredEvent } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { startBrainProcess } from "../helpers/brain-process.js";
import { sendJson, startToolService, type ToolService, textResult } from "../helpers/tool-service.js";
import { ofType, runTurn } from "../helpers/turns.js";
import { PROVIDER_KEY } from "../providers/conformance.js";
import { anthropicReply } from "../providers/fake-anthropic.js";
import {
  type FakeModelServer,
  type Reply,
  startFakeModelServer,
  writeSseAndHold,
} from "../providers/fake-model-server.js";
import { type OpenAIRequestBody, openAIReply } from "../providers/fake-openai.js";
import {
  anthropicTokens,
  anthropicWindowed,
  isCompaction,
  openAITokens,
  openAIWindowed,
} from "../providers/fake-window.js";

const TURNS = 200;
const WINDOW = 4000;
const MIB = 1024 * 1024;
const WIDE = 8000;
const NARROW = 1500;

let fake: FakeModelServer;
let tools: ToolService;
let brain: TestBrain;
let client: BrainClient;
/** How the fake answers the next requests: each test sets its own. */
let answer: Reply;

const textSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const binding = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool.`,
  input_schema: textSchema,
  url: tools.at(`/${name}`),
  tenants: ["acme"],
  ...extra,
});
const openAIModel = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: "openai",
  model: "gpt-4o-mini",
  api_key_env: "PROVIDER_KEY",
  base_url: `${fake.url}/v1`,
  max_tokens: 200,
  max_retries: 0,
  ...extra,
});

beforeAll(async () => {
  fake = await startFakeModelServer();
  tools = await startToolService({
    "/echo": (call, res) =>
      sendJson(
        res,
        textResult(
          `${(call.body.arguments as { text: string }).text}: ${"the weather was fine that day. ".repeat(20)}`,
        ),
      ),
    "/big": (_call, res) => sendJson(res, textResult("é".repeat(MIB / 2))),
  });
  brain = await startBrain(
    {
      models: [
        openAIModel("default", { context_window: WINDOW }),
        // a window Brain is told is far larger than the one the provider enforces
        openAIModel("optimist", { context_window: 100_000 }),
        openAIModel("large"),
        // a session model whose summaries a model of a smaller window writes
        openAIModel("wide", { context_window: WIDE, context: { compaction_model: "narrow" } }),
        openAIModel("narrow", { context_window: NARROW }),
        {
          name: "claude",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          api_key_env: "PROVIDER_KEY",
          base_url: fake.url,
          max_tokens: 200,
          max_retries: 0,
        },
      ],
      tools: [binding("echo"), binding("big", { max_output_bytes: 2 * MIB })],
    },
    { env: { PROVIDER_KEY } },
  );
  client = brain.client();
  fake.enqueue(...Array.from({ length: 10_000 }, (): Reply => (res, request) => answer(res, request)));
});

afterAll(async () => {
  await brain?.stop();
  await tools?.close();
  await fake?.close();
});

/**
 * The fake OpenAI model of these sessions: it calls echo with each user message, then answers,
 * and summarises when asked to compact; its usage is its own count of the request.
 */
const openAIAgent: Reply = (res, request) => {
  const body = request.body as OpenAIRequestBody;
  const usage = { input: openAITokens(body), output: 20 };
  if (isCompaction(request))
    return openAIReply({ text: `Summary of ${body.messages.length} messages.`, usage })(res, request);
  const last = body.messages.at(-1);
  if (last?.role === "user")
    return openAIReply({
      tools: [
        {
          id: `call_${fake.requests.length}`,
          name: "echo",
          arguments: JSON.stringify({ text: last.content }),
        },
      ],
      usage,
    })(res, request);
  return openAIReply({ text: "Done.", usage })(res, request);
};

function metric(text: string, line: string): number {
  const found = text.split("\n").find((row) => row.startsWith(line));
  return found ? Number(found.slice(line.length).trim()) : 0;
}

async function metricsText(): Promise<string> {
  const response = await fetch(`${brain.url}/metrics`, {
    headers: { authorization: `Bearer ${brain.keys.acme}` },
  });
  return response.text();
}

/** Each turn's usage as its turn.completed says, against its model calls' and compactions' summed. */
function turnUsages(events: readonly StoredEvent[]) {
  const turns: {
    completed: unknown;
    spent: { input_tokens: number; output_tokens: number };
    compacted: number;
  }[] = [];
  let spent = { input_tokens: 0, output_tokens: 0 };
  let compacted = 0;
  for (const event of events) {
    if (event.type === "turn.started") {
      spent = { input_tokens: 0, output_tokens: 0 };
      compacted = 0;
    } else if (event.type === "message.assistant" || event.type === "context.compacted") {
      spent.input_tokens += event.data.usage.input_tokens;
      spent.output_tokens += event.data.usage.output_tokens;
      if (event.type === "context.compacted") compacted++;
    } else if (event.type === "turn.completed") turns.push({ completed: event.data.usage, spent, compacted });
  }
  return turns;
}

describe("a session on a fake OpenAI that enforces its window", () => {
  it("stays under the window for hundreds of turns: the provider never refuses a request", async () => {
    const seen = { tokens: [] as number[] };
    answer = openAIWindowed(WINDOW, openAIAgent, seen);
    const session = await client.createSession({ tools: ["echo"] });
    for (let turn = 1; turn <= TURNS; turn++) await runTurn(client, session.id, `question ${turn}`);
    const events = await client.events(session.id, { limit: 10_000 });
    expect(ofType(events, "turn.failed")).toEqual([]);
    expect(ofType(events, "turn.completed")).toHaveLength(TURNS);
    expect(ofType(events, "tool.result")).toHaveLength(TURNS);
    // every request was within the window the fake counts (it refuses any other, and any that parts a call from its result)
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW);
    const compactions = ofType(events, "context.compacted");
    expect(compactions.length).toBeGreaterThan(5);
    for (const { data } of compactions) {
      expect(data).toMatchObject({
        strategy: "compact",
        summary: expect.stringMatching(/^Summary of \d+ messages\.$/),
      });
      expect(data.usage.input_tokens).toBeGreaterThan(0);
      expect(data.tokens_after).toBeLessThan(data.tokens_before);
    }
    const metrics = await metricsText();
    expect(metric(metrics, 'brain_context_compactions_total{model="default",strategy="compact"}')).toBe(
      compactions.length,
    );
    expect(metric(metrics, 'brain_context_compaction_tokens_total{model="default",kind="input"}')).toBe(
      compactions.reduce((sum, { data }) => sum + data.usage.input_tokens, 0),
    );
    // a turn's usage counts its compactions' tokens with its model calls'
    const turns = turnUsages(events);
    expect(turns.filter((turn) => turn.compacted > 0)).toHaveLength(compactions.length);
    for (const turn of turns) expect(turn.completed).toEqual(turn.spent);
  }, 120_000);

  it("compacts once and retries when the provider refuses a request as too long", async () => {
    const seen = { tokens: [] as number[] };
    answer = openAIWindowed(WINDOW, openAIAgent, seen);
    const session = await client.createSession({ model: "optimist", tools: ["echo"] });
    for (let turn = 1; turn <= 30; turn++) await runTurn(client, session.id, `question ${turn}`);
    const events = await client.events(session.id, { limit: 10_000 });
    expect(ofType(events, "turn.failed")).toEqual([]);
    expect(ofType(events, "turn.completed")).toHaveLength(30);
    // the fake refused at least once, and each refusal was followed by a compaction and the same call again
    const refused = seen.tokens.filter((tokens) => tokens > WINDOW).length;
    expect(refused).toBeGreaterThan(0);
    expect(ofType(events, "context.compacted")).toHaveLength(refused);
  }, 60_000);

  it("cuts a 1 MiB result to max_model_bytes for the model, with a note, and stores it whole", async () => {
    const replies = [
      openAIReply({ tools: [{ id: "call_big", name: "big", arguments: '{"text":"all of it"}' }] }),
      openAIReply({ text: "That was long." }),
    ];
    answer = (res, request) => (replies.shift() as Reply)(res, request);
    const session = await client.createSession({ model: "large", tools: ["big"] });
    await runTurn(client, session.id, "read the big one");
    const [stored] = ofType(await client.events(session.id), "tool.result");
    expect(stored?.data.content).toEqual([{ type: "text", text: "é".repeat(MIB / 2) }]);
    const sent = (fake.requests.at(-1)?.body as OpenAIRequestBody | undefined)?.messages.at(-1);
    expect(sent?.role).toBe("tool");
    const content = sent?.role === "tool" ? sent.content : "";
    expect(content.startsWith("é".repeat(32_768))).toBe(true);
    expect(content).not.toContain("é".repeat(32_769));
    expect(content).toContain(
      `[Brain cut this result for the model: ${MIB - 65_536} of its ${MIB} bytes were left out (the tool's max_model_bytes is 65536). The whole result is in the session's events, in the tool.result of call ${stored?.data.call_id}.]`,
    );
  });
});

describe("a compaction model of a smaller window than the session's model", () => {
  const TURNS_WIDE = 60;
  /** A session on "wide" of TURNS_WIDE turns, the fake enforcing the window of each request's model. */
  async function wideSession(summarisingWindow: number) {
    const seen = { tokens: [] as number[] };
    const summaries = { tokens: [] as number[] };
    answer = (res, request) =>
      isCompaction(request)
        ? openAIWindowed(summarisingWindow, openAIAgent, summaries)(res, request)
        : openAIWindowed(WIDE, openAIAgent, seen)(res, request);
    const session = await client.createSession({ model: "wide", tools: ["echo"] });
    for (let turn = 1; turn <= TURNS_WIDE; turn++) await runTurn(client, session.id, `question ${turn}`);
    const events = await client.events(session.id, { limit: 10_000 });
    expect(ofType(events, "turn.failed")).toEqual([]);
    expect(ofType(events, "turn.completed")).toHaveLength(TURNS_WIDE);
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WIDE);
    const compactions = ofType(events, "context.compacted");
    expect(compactions.length).toBeGreaterThan(0);
    return { compactions, summaries };
  }

  it("is sent the newest of the part to summarise that fit its own window, and the summary says what it left out", async () => {
    const { compactions, summaries } = await wideSession(NARROW);
    // the part to summarise was larger than the narrow window: it was cut to it, counted as it counts
    expect(Math.max(...summaries.tokens)).toBeLessThanOrEqual(NARROW);
    for (const { data } of compactions) {
      expect(data.strategy).toBe("compact");
      expect(data.summary).toMatch(
        /^Summary of \d+ messages\.\n\n\[This summary leaves out the \d+ oldest of the messages it replaces, which did not fit the summarising model's context window; the session's events keep them all\.\]$/,
      );
    }
  }, 60_000);

  it("refusing its transcript as too long all the same, leaves the oldest turns out instead: no turn fails", async () => {
    // a provider whose count is not Brain's: it refuses every summarising request as too long
    const { compactions, summaries } = await wideSession(0);
    expect(summaries.tokens).toHaveLength(compactions.length);
    for (const { data } of compactions) {
      expect(data).toMatchObject({ strategy: "truncate", usage: { input_tokens: 0, output_tokens: 0 } });
      expect(data.summary).toMatch(/^\[\d+ earlier turns? (was|were) left out here/);
    }
  }, 60_000);
});

describe("a session on a fake Anthropic that enforces its window", () => {
  /** Claude as the fake plays it: calls echo with each question, answers, summarises when asked. */
  const claude: Reply = (res, request) => {
    const body = request.body as { messages: { role: string; content: unknown }[] };
    const usage = { input: anthropicTokens(body), output: 20 };
    if (isCompaction(request))
      return anthropicReply({ text: "Summary: questions were asked.", usage })(res, request);
    const last = body.messages.at(-1);
    const answered =
      Array.isArray(last?.content) && last.content.some((block) => block.type === "tool_result");
    if (!answered)
      return anthropicReply({
        tools: [{ id: `toolu_${fake.requests.length}`, name: "echo", input: { text: "again" } }],
        usage,
      })(res, request);
    return anthropicReply({ text: "Done.", usage })(res, request);
  };

  it("compacts once and retries on 'prompt is too long', and the turns go on", async () => {
    answer = anthropicWindowed(3000, claude);
    const session = await client.createSession({ model: "claude", tools: ["echo"] });
    for (let turn = 1; turn <= 30; turn++) await runTurn(client, session.id, `question ${turn}`);
    const events = await client.events(session.id, { limit: 10_000 });
    expect(ofType(events, "turn.failed")).toEqual([]);
    expect(ofType(events, "turn.completed")).toHaveLength(30);
    expect(ofType(events, "context.compacted").length).toBeGreaterThan(0);
  }, 60_000);

  it("fails the turn context_exceeded, with the numbers, when compacting cannot make it fit", async () => {
    answer = anthropicWindowed(3000, claude);
    const session = await client.createSession({ model: "claude", tools: ["echo"] });
    const events = await runTurn(client, session.id, "so long ".repeat(3000));
    const [failed] = ofType(events, "turn.failed") as StoredEvent[] as Extract<
      StoredEvent,
      { type: "turn.failed" }
    >[];
    expect(failed?.data.error.code).toBe("context_exceeded");
    expect(failed?.data.error.message).toMatch(/prompt is too long: \d+ tokens > 3000 maximum/);
    expect(failed?.data.context).toEqual({ tokens: expect.any(Number), context_window: 200_000 });
    // the session takes messages again
    expect((await client.getSession(session.id)).status).toBe("idle");
  });
});

describe("a restart in the middle of a compaction", () => {
  it("leaves the old context or the compacted one, never half, and the next turn compacts again", async () => {
    const seen = { tokens: [] as number[] };
    answer = openAIWindowed(WINDOW, openAIAgent, seen);
    const session = await client.createSession({ tools: ["echo"] });
    const compactions = async () =>
      ofType(await client.events(session.id, { limit: 10_000 }), "context.compacted");
    let turn = 0;
    while ((await compactions()).length === 0) await runTurn(client, session.id, `question ${++turn}`);
    // the next compaction's request is held until Brain goes away
    let held: () => void = () => undefined;
    const compacting = new Promise<void>((resolve) => {
      held = resolve;
    });
    answer = (res, request) => {
      if (!isCompaction(request)) return openAIWindowed(WINDOW, openAIAgent, seen)(res, request);
      held();
      return writeSseAndHold(res, "", request);
    };
    const before = (await client.events(session.id, { limit: 10_000 })).at(-1)?.seq ?? 0;
    for (;;) {
      await client.sendMessage(session.id, `question ${++turn}`);
      const ended = await Promise.race([
        compacting.then(() => "compacting" as const),
        waitForTurnEnd(client, session.id).then(() => "ended" as const),
      ]);
      if (ended === "compacting") break;
    }
    await brain.restart();
    client = brain.client();
    const after = await client.events(session.id, { after: before, limit: 10_000 });
    // what was stored is the old context: no compaction of the turn that was cut short
    expect(ofType(after, "context.compacted")).toEqual([]);
    expect(after.at(-1)?.type).toMatch(/^turn\.(interrupted|failed)$/);

    answer = openAIWindowed(WINDOW, openAIAgent, seen);
    const next = await runTurn(client, session.id, `question ${++turn}`);
    expect(ofType(next, "context.compacted")).toHaveLength(1);
    expect(ofType(next, "turn.completed")).toHaveLength(1);
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW);
  }, 120_000);
});

describe("Brain killed (kill -9) in the middle of a compaction", () => {
  it("comes back with the old context: the turn ends brain_restarted, and the next one compacts", async () => {
    const seen = { tokens: [] as number[] };
    answer = openAIWindowed(WINDOW, openAIAgent, seen);
    const killed = await startBrainProcess(
      { models: [openAIModel("default", { context_window: WINDOW })], tools: [binding("echo")] },
      { PROVIDER_KEY },
    );
    try {
      let own = killed.client();
      const session = await own.createSession({ tools: ["echo"] });
      const compactions = async () =>
        ofType(await own.events(session.id, { limit: 10_000 }), "context.compacted");
      let turn = 0;
      while ((await compactions()).length === 0) await runTurn(own, session.id, `question ${++turn}`);
      let held: () => void = () => undefined;
      const compacting = new Promise<void>((resolve) => {
        held = resolve;
      });
      answer = (res, request) => {
        if (!isCompaction(request)) return openAIWindowed(WINDOW, openAIAgent, seen)(res, request);
        held();
        return writeSseAndHold(res, "", request);
      };
      const before = (await own.events(session.id, { limit: 10_000 })).at(-1)?.seq ?? 0;
      for (;;) {
        await own.sendMessage(session.id, `question ${++turn}`);
        const ended = await Promise.race([
          compacting.then(() => "compacting" as const),
          waitForTurnEnd(own, session.id).then(() => "ended" as const),
        ]);
        if (ended === "compacting") break;
      }
      await killed.kill();
      await killed.start();
      own = killed.client();
      const after = await own.events(session.id, { after: before, limit: 10_000 });
      expect(ofType(after, "context.compacted")).toEqual([]);
      const failed = ofType(after, "turn.failed") as Extract<StoredEvent, { type: "turn.failed" }>[];
      expect(failed.map((event) => event.data.error.code)).toEqual(["brain_restarted"]);

      answer = openAIWindowed(WINDOW, openAIAgent, seen);
      const next = await runTurn(own, session.id, `question ${++turn}`);
      expect(ofType(next, "context.compacted")).toHaveLength(1);
      expect(ofType(next, "turn.completed")).toHaveLength(1);
      expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW);
    } finally {
      await killed.stop();
    }
  }, 120_000);
});

async function waitForTurnEnd(client: BrainClient, sessionId: string): Promise<void> {
  for (;;) {
    if ((await client.getSession(sessionId)).status === "idle") return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
