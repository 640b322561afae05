import { setTimeout as sleep } from "node:timers/promises";
import type { BrainClient } from "../client/client.js";
import { recordSession } from "../models/recording.js";
import { type ComparableEvent, canonical, compareReplay } from "../models/replay-diff.js";
import {
  type CommandIo,
  describeFailure,
  processIo,
  readAllEvents,
  sessionCommand,
} from "./session-command.js";

const HELP = `brain replay — replay a stored session with the scripted model, against the tools as they are now

Usage:
  brain replay SESSION_ID --model NAME [--url URL] [--turn-timeout SECONDS]

Records the session's model steps (as \`brain script\` prints them), opens a new session with the
same tools, system prompt and max_steps, whose model is NAME with the recording as its script,
sends the recorded messages one turn at a time, and compares the new session's events with the
recorded ones, ids, times and durations aside. This is how a tool author replays a real session
against a changed tool service, with no provider key and no network. Prints the new session's id
and every difference; exits 0 when there is none, 1 when something changed, 2 on bad usage.

Options:
  --model NAME             a model of provider "scripted" in Brain's host config (required)
  --url URL                Brain's URL (default: $BRAIN_URL, else http://127.0.0.1:8080)
  --turn-timeout SECONDS   the longest wait for one turn to end (default 300)
  -h, --help               this help`;

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.interrupted"]);
const POLL_MS = 50;
const SHOWN_CHARS = 300;

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const command = sessionCommand("replay", HELP, args, io, ["model", "turn-timeout"]);
  if (typeof command === "number") return command;
  const { client, options, usage } = command;
  if (!options.model)
    return usage("--model is required: the name of a scripted model in Brain's host config");
  const turnTimeout = Number(options["turn-timeout"] ?? 300);
  if (!(turnTimeout > 0))
    return usage(`--turn-timeout must be a positive number, not "${options["turn-timeout"]}"`);

  const recordedId = command.sessionId;
  try {
    const original = await client.getSession(recordedId);
    const recorded = await readAllEvents(client, recordedId);
    const recording = recordSession(recorded);
    for (const note of recording.notes) io.stderr(`note: ${note}\n`);
    const replay = await client.createSession({
      model: options.model,
      tools: original.config.tools,
      ...(original.config.system !== undefined && { system: original.config.system }),
      max_steps: original.config.max_steps,
      metadata: { replay_of: recordedId },
      script: recording.script,
    });
    io.stdout(
      `replaying ${recordedId} as ${replay.id}: ${recording.messages.length} messages, ${recording.script.length} model steps\n`,
    );
    for (const message of recording.messages) await runTurn(client, replay.id, message, turnTimeout * 1000);
    const differences = compareReplay(recorded, await readAllEvents(client, replay.id));
    for (const { index, recorded: before, replayed: after } of differences) {
      io.stdout(`event ${index + 1} differs:\n  recorded: ${shown(before)}\n  replayed: ${shown(after)}\n`);
    }
    const count = differences.length;
    io.stdout(count === 0 ? "no differences\n" : `${count} event${count === 1 ? " differs" : "s differ"}\n`);
    return count === 0 ? 0 : 1;
  } catch (error) {
    io.stderr(`brain replay: ${describeFailure(error)}\n`);
    return 1;
  }
}

/** Send one message and wait until its turn ends. */
async function runTurn(
  client: BrainClient,
  sessionId: string,
  content: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let after = (await client.sendMessage(sessionId, content)).seq;
  for (;;) {
    const events = await client.events(sessionId, { after });
    if (events.some((event) => TURN_ENDS.has(event.type))) return;
    after = events.at(-1)?.seq ?? after;
    if (Date.now() > deadline)
      throw new Error(`a turn of ${sessionId} did not end within ${timeoutMs / 1000} s`);
    await sleep(POLL_MS);
  }
}

function shown(event: ComparableEvent | undefined): string {
  if (!event) return "(none)";
  const text = `${event.type} ${canonical(event.data)}`;
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 1)}…` : text;
}
