import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Agent } from "undici";
import { createSession, sendMessage } from "./api.js";
import { startBrainProcess } from "./brain-process.js";
import { type ArrivedEvent, watchEvents, watchStream } from "./event-stream.js";
import { startEchoService, startNode } from "./processes.js";
import { type Benchmark, versus } from "./section.js";
import { nowMs, summarize } from "./stats.js";

const WARMUP_MESSAGES = 5;
/**
 * The scripted model's think time before it answers. The raw reference sends one event and nothing
 * after it; without a pause Brain would be writing the turn's next events to the same thousand
 * sockets while the timed one is still being delivered, and the figure would time two broadcasts.
 */
const THINK_MS = 50;

interface FanOutTarget {
  /** Open one watcher; `onEvent` sees every frame it gets. */
  watch: (onEvent: (event: ArrivedEvent) => void, signal: AbortSignal) => Promise<{ closed: Promise<void> }>;
  /** Make one event happen. */
  trigger: () => Promise<unknown>;
  /** The event whose arrival is timed, and the one after which the next trigger may go. */
  marker: string;
  end: string;
}

/**
 * Fan-out: `clients` SSE clients on one session; a message is posted and the arrival of its
 * message.user event is timed at every client, from just before the POST. The reference is the raw
 * limit: a bare node:http server writing one frame of the same size to as many clients.
 */
export const run: Benchmark = async (context) => {
  const { clients, messages } = context.options;
  const token = randomBytes(24).toString("base64url");
  const echo = await startEchoService(context.root, token);
  const brain = await startBrainProcess(context, {
    name: "fanout",
    echoUrl: echo.ready,
    toolsKey: token,
    script: Array.from({ length: WARMUP_MESSAGES + messages }, () => ({ text: "ok", delay_ms: THINK_MS })),
  });
  const broadcast = await startNode({
    root: context.root,
    args: ["dist/bench/broadcast-server.js"],
    env: {},
    ready: (line) => line.match(/listening on (\S+)/)?.[1],
  });
  const agent = new Agent({ connections: null });
  try {
    const session = await createSession(agent, brain);
    context.log(`fanout: ${clients} clients on one Brain session, ${messages} messages`);
    const brainSamples = await measure(clients, messages, {
      watch: (onEvent, signal) => watchEvents(agent, brain, session.id, onEvent, signal),
      trigger: () => sendMessage(agent, brain, session.id),
      marker: "message.user",
      end: "turn.completed",
    });
    context.log(`fanout: ${clients} clients on the raw broadcast server`);
    const rawSamples = await measure(clients, messages, {
      watch: (onEvent, signal) => watchStream(agent, broadcast.ready, "/events", {}, onEvent, signal),
      trigger: async () => {
        const response = await agent.request({ origin: broadcast.ready, path: "/publish", method: "POST" });
        await response.body.dump();
      },
      marker: "tick",
      end: "tick",
    });
    const ours = summarize(brainSamples);
    const raw = summarize(rawSamples);
    return {
      id: "fanout",
      title: "Fan-out (SSE clients on one session)",
      params: { clients, messages, think_ms: THINK_MS },
      figures: [
        versus("delivery latency p50", ours.p50, "raw broadcast", raw.p50),
        {
          ...versus("delivery latency p99", ours.p99, "raw broadcast", raw.p99),
          target: { text: "< 50 ms", met: ours.p99 < 50 },
        },
      ],
      notes: [
        `${ours.count} deliveries timed (raw: ${raw.count}).`,
        "Latency: from just before the POST that causes the event to its arrival at each client, so it includes handling the POST and committing the event; the clients and the poster share one process.",
        `Each message starts a turn; the scripted model answers after ${THINK_MS} ms, as a model would think, so the turn's later events are not written while the timed one is delivered.`,
      ],
    };
  } finally {
    await agent.close().catch(() => undefined);
    await Promise.allSettled([brain.stop(), echo.stop(), broadcast.stop()]);
  }
};

/** Open the clients, then for each message time its marker's arrival at every client. */
async function measure(clients: number, messages: number, target: FanOutTarget) {
  const stop = new AbortController();
  // one signal ends every stream: a listener per stream is expected, not a leak
  setMaxListeners(0, stop.signal);
  let sentAt = 0;
  let counting = false;
  let pendingEnds = 0;
  let allEnded = () => {};
  const samples: number[] = [];
  const onEvent = (event: ArrivedEvent) => {
    if (event.type === target.marker && counting) samples.push(event.at - sentAt);
    if (event.type === target.end && --pendingEnds === 0) allEnded();
  };
  const watchers = [];
  for (let i = 0; i < clients; i += 100) {
    const batch = Array.from({ length: Math.min(100, clients - i) }, () =>
      target.watch(onEvent, stop.signal),
    );
    watchers.push(...(await Promise.all(batch)));
  }
  try {
    for (let m = 0; m < WARMUP_MESSAGES + messages; m++) {
      counting = m >= WARMUP_MESSAGES;
      pendingEnds = clients;
      const ended = new Promise<void>((resolve) => {
        allEnded = resolve;
      });
      sentAt = nowMs();
      await target.trigger();
      await ended;
    }
  } finally {
    stop.abort();
    await Promise.allSettled(watchers.map((watcher) => watcher.closed));
  }
  return samples;
}
