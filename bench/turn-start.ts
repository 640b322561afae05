import { join } from "node:path";
import type { NewEvent } from "../protocol/events.js";
import type { ContextMeasure } from "../src/context/history.js";
import { requestTokens, tokenCounter } from "../src/context/tokens.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { Conversations } from "../src/turns/conversations.js";
import { makeTemporaryDir, removeTemporaryDir } from "./processes.js";
import type { Benchmark } from "./section.js";
import { type Figure, versus } from "./section.js";
import { summarize } from "./stats.js";

const TURNS = 1000;
/** A session five times as long, sent whole: a turn start should cost what it costs at TURNS. */
const LONG_TURNS = 5000;
/** A compaction every this many turns, keeping the newest two: what a small window makes of a long session. */
const COMPACT_EVERY = 20;
const usage = { input_tokens: 0, output_tokens: 0 };
const tools = [
  {
    name: "echo",
    description: "Echo text.",
    input_schema: { type: "object", properties: { text: { type: "string" } } },
  },
];

/** One turn as a real one is stored: the question, a step with a call and its result, the answer. */
function turn(n: number): NewEvent[] {
  const call = { call_id: `call_${n}`, name: "echo", arguments: { text: `question ${n}` } };
  return [
    { type: "message.user", data: { content: `question ${n}` } },
    { type: "turn.started", data: {} },
    {
      type: "message.assistant",
      data: {
        text: "",
        tool_calls: [call],
        stop_reason: "tool_use",
        usage: { input_tokens: 900, output_tokens: 20 },
      },
    },
    { type: "tool.call", data: call },
    {
      type: "tool.result",
      data: {
        call_id: call.call_id,
        name: "echo",
        is_error: false,
        content: [{ type: "text", text: `echo: question ${n} ${"and so on ".repeat(20)}` }],
        duration_ms: 1,
      },
    },
    {
      type: "message.assistant",
      data: { text: `answer ${n}`, tool_calls: [], stop_reason: "end_turn", usage },
    },
    { type: "turn.completed", data: { stop_reason: "end_turn", steps: 2, usage } },
  ];
}

/**
 * The turn starts of one session of `turns` turns: each turn is stored, then the next turn start is
 * timed — what Brain does before its first model call: catch the session's folded conversation
 * up from the store and count its tokens against the window — with the turn's first message added
 * to its conversation, which once reallocated a long session's (BENCHMARKS.md). Returns each
 * start's milliseconds.
 */
async function turnStarts(
  store: SqliteStore,
  id: string,
  measure: ContextMeasure,
  { compact, turns }: { compact: boolean; turns: number },
) {
  const conversations = new Conversations(store);
  const overhead = requestTokens(measure.counter, undefined, tools);
  const userSeqs: number[] = [];
  const starts: number[] = [];
  for (let n = 1; n <= turns; n++) {
    const stored = await store.append(id, turn(n));
    if (!stored.ok) throw new Error(`the bench's store refused turn ${n}`);
    userSeqs.push(stored.events[0]?.seq ?? 0);
    if (compact && n % COMPACT_EVERY === 0) {
      const keptFrom = userSeqs[n - 2] ?? 1;
      await store.append(id, [
        {
          type: "context.compacted",
          data: {
            strategy: "compact",
            summary: `Turns up to ${n - 2}, in short.`,
            through_seq: keptFrom - 1,
            usage,
            tokens_before: 0,
            tokens_after: 0,
          },
        },
      ]);
    }
    const started = performance.now();
    const history = await conversations.of(id, measure);
    history.tokens(overhead);
    history.push({ role: "assistant", text: "", tool_calls: [] });
    starts.push(performance.now() - started);
    history.release();
  }
  return starts;
}

/**
 * Turn start with and without compaction: a 1,000-turn session (7,000 events) whose conversation
 * is compacted every 20 turns, against the same session sent whole (Brain before compaction); and a
 * session sent whole five times as long, against the 1,000-turn one.
 */
export const run: Benchmark = async (context) => {
  const dir = makeTemporaryDir("brain-bench-turn-start-");
  const store = new SqliteStore(join(dir, "brain.db"));
  try {
    const measure: ContextMeasure = { counter: await tokenCounter("openai"), forModel: (result) => result };
    const figures: Figure[] = [];
    const results: Record<string, ReturnType<typeof summarize>> = {};
    const sessions = [
      { name: "whole", compact: false, turns: TURNS },
      { name: "compacted", compact: true, turns: TURNS },
      { name: "long", compact: false, turns: LONG_TURNS },
    ];
    for (const { name, compact, turns } of sessions) {
      const id = `ses_${name}`;
      const config = { model: "default", tools: ["echo"], max_steps: 8, metadata: {} };
      await store.createSession(
        { id, tenant_id: "bench", created_at: new Date().toISOString(), config },
        { type: "session.created", data: { config } },
      );
      context.log(`turn-start: ${turns} turns, ${compact ? "compacted" : "sent whole"}`);
      const starts = await turnStarts(store, id, measure, { compact, turns });
      // the last 100: the session at its longest
      results[name] = summarize(starts.slice(-100));
    }
    const compacted = results.compacted as ReturnType<typeof summarize>;
    const whole = results.whole as ReturnType<typeof summarize>;
    const long = results.long as ReturnType<typeof summarize>;
    figures.push(
      {
        ...versus("turn start, compacted, p50 of turns 901-1,000", compacted.p50, "sent whole", whole.p50),
        target: { text: "near 0.03 ms", met: compacted.p50 < 0.06 },
      },
      versus("turn start, compacted, mean", compacted.mean, "sent whole", whole.mean),
      versus("turn start, compacted, p99", compacted.p99, "sent whole", whole.p99),
      {
        ...versus(
          `turn start, ${LONG_TURNS.toLocaleString("en")} turns sent whole, p50 of the last 100`,
          long.p50,
          `${TURNS.toLocaleString("en")} turns`,
          whole.p50,
        ),
        target: { text: "≤ 1.5×", met: long.p50 <= 1.5 * whole.p50 },
      },
    );
    return {
      id: "turn-start",
      title: "Turn start of a long session (catch the conversation up from the store, count its tokens)",
      params: {
        turns: TURNS,
        events: TURNS * 7,
        compact_every: COMPACT_EVERY,
        long_turns: LONG_TURNS,
        store: "sqlite",
      },
      figures,
      notes: [
        "Timed in process around Conversations.of, the token count before the first model call and the turn's first message added to its conversation; the compaction itself (a model call) is not part of a turn start.",
      ],
    };
  } finally {
    await store.close();
    removeTemporaryDir(dir);
  }
};
