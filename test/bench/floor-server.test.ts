import Database from "better-sqlite3";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, sendMessage } from "../../bench/api.js";
import { type BenchBrain, ECHO_STEP, FLOOR_ENTRY, startBrainProcess } from "../../bench/brain-process.js";
import { type ArrivedEvent, watchEvents } from "../../bench/event-stream.js";
import { parseOptions } from "../../bench/options.js";
import { type NodeProcess, startEchoService } from "../../bench/processes.js";
import { ROOT } from "../helpers/cli.js";

// The floor is what Brain's CPU per call is compared with: if it skipped a commit, the POST or a
// frame, the comparison would flatter it. This runs it as the benchmarks do and checks its I/O.
describe("the benchmarks' floor server", () => {
  const token = "floor-test-token-0123456789";
  let echo: NodeProcess<string>;
  let floor: BenchBrain;
  const agent = new Agent();

  beforeAll(async () => {
    const parsed = parseOptions([], {});
    if (!parsed.ok) throw new Error("default bench options did not parse");
    const context = { options: parsed.options, root: ROOT, log: () => {} };
    echo = await startEchoService(ROOT, token);
    floor = await startBrainProcess(context, {
      name: "floor-test",
      echoUrl: echo.ready,
      toolsKey: token,
      script: [ECHO_STEP, ECHO_STEP, { text: "done" }],
      entry: FLOOR_ENTRY,
    });
  });

  afterAll(async () => {
    await agent.close();
    await Promise.allSettled([floor?.stop(), echo?.stop()]);
  });

  it("stores each call in two commits around the POST and streams every stored event", async () => {
    const session = await createSession(agent, floor);
    const events: ArrivedEvent[] = [];
    const stop = new AbortController();
    let ended: () => void = () => {};
    const turnEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const watched = await watchEvents(
      agent,
      floor,
      session.id,
      (event) => {
        events.push(event);
        if (event.type === "turn.completed") ended();
      },
      stop.signal,
    );
    await sendMessage(agent, floor, session.id);
    await turnEnded;
    stop.abort();
    await watched.closed;

    const call = ["message.assistant", "tool.call", "tool.result"];
    const types = ["message.user", "turn.started", ...call, ...call, "message.assistant", "turn.completed"];
    expect(events.map((event) => event.type)).toEqual(types);
    // the echo service answered each call, and the floor kept its answer
    const results = events
      .filter((event) => event.type === "tool.result")
      .map((event) => JSON.parse(event.data));
    for (const result of results) {
      expect(result.data).toMatchObject({ is_error: false, content: [{ type: "text", text: "hello" }] });
    }
    // what was streamed is what was committed, seq for seq (the file is the floor's alone while it runs)
    await floor.process.stop();
    const db = new Database(floor.dbPath, { readonly: true, fileMustExist: true });
    try {
      const stored = db
        .prepare("SELECT seq, type FROM events WHERE session_id = ? AND seq > 1 ORDER BY seq")
        .all(session.id);
      expect(stored).toEqual(events.map((event) => ({ seq: event.seq, type: event.type })));
    } finally {
      db.close();
    }
  });
});
