import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { endsTurn } from "../../protocol/events.js";
import { BrainApiError, type BrainClient } from "../client/client.js";
import { parseRecordingFile, type RecordingFile, recordSession } from "../models/recording.js";
import { type ComparableEvent, canonical, compareReplay } from "../models/replay-diff.js";
import {
  type CommandIo,
  describeFailure,
  fetchRecording,
  processIo,
  readAllEvents,
  sessionCommand,
} from "./session-command.js";

const HELP = `brain replay — replay a stored session with the scripted model, against the tools as they are now

Usage:
  brain replay SESSION_ID --model NAME [--url URL] [--turn-timeout SECONDS]
  brain replay FILE --model NAME [--url URL] [--turn-timeout SECONDS]

Records the session's model steps (as \`brain script\` prints them), opens a new session with the
same tools, system prompt and max_steps, whose model is NAME with the recording as its script,
sends the recorded messages one turn at a time, and compares the new session's events with the
recorded ones, ids, times and durations aside. This is how a tool author replays a real session
against a changed tool service, with no provider key and no network. Prints the new session's id
and every difference; exits 0 when there is none, 1 when something changed, 2 on bad usage.

SESSION_ID (ses_ and letters and digits) is a session stored in this Brain. Anything else is a
recording file that \`brain script SESSION_ID --out FILE\` wrote, perhaps on another Brain: it holds
the messages, script and events, so any Brain with a scripted model NAME and the same tools
replays it (write ./ses_… for a file whose name looks like a session id).

Options:
  --model NAME             a model of provider "scripted" in Brain's host config (required);
                           Brain refuses any other, which would call its provider
  --url URL                Brain's URL (default: $BRAIN_URL, else http://127.0.0.1:8080)
  --turn-timeout SECONDS   the longest wait for one turn to end (default 300)
  -h, --help               this help`;

const POLL_MS = 50;
const SHOWN_CHARS = 300;
// the shape of newId("ses"); a path has a dot or a slash, and ./ses_x makes any name a path
const SESSION_ID = /^ses_[0-9a-z]+$/;

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const command = sessionCommand("replay", HELP, args, io, ["model", "turn-timeout"], "SESSION_ID or FILE");
  if (typeof command === "number") return command;
  const { client, options, usage, argument } = command;
  const model = options.model;
  if (!model) return usage("--model is required: the name of a scripted model in Brain's host config");
  const turnTimeout = Number(options["turn-timeout"] ?? 300);
  if (!(turnTimeout > 0))
    return usage(`--turn-timeout must be a positive number, not "${options["turn-timeout"]}"`);

  try {
    const { file, notes } = SESSION_ID.test(argument)
      ? await fetchRecording(client, argument)
      : readRecording(argument);
    for (const note of notes) io.stderr(`note: ${note}\n`);
    const replayId = await openReplay(client, file, model);
    const source = file.session_id === argument ? argument : `${argument} (${file.session_id})`;
    io.stdout(
      `replaying ${source} as ${replayId}: ${file.messages.length} messages, ${file.script.length} model steps\n`,
    );
    for (const message of file.messages) await runTurn(client, replayId, message, turnTimeout * 1000);
    const differences = compareReplay(file.events, await readAllEvents(client, replayId));
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

/** A recording file written by `brain script --out`, and its notes; throws what is wrong with it. */
function readRecording(path: string): { file: RecordingFile; notes: string[] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  const parsed = parseRecordingFile(text);
  if (!parsed.ok) {
    throw new Error(
      `${path} is not a recording file of \`brain script --out\`:\n  ${parsed.problems.join("\n  ")}`,
    );
  }
  return { file: parsed.value, notes: recordSession(parsed.value.events).notes };
}

/** Open the session that replays `file` with `model`; a refusal says which --model it was. */
async function openReplay(client: BrainClient, file: RecordingFile, model: string): Promise<string> {
  try {
    const replay = await client.createSession({
      model,
      ...file.config,
      metadata: { replay_of: file.session_id },
      script: file.script,
    });
    return replay.id;
  } catch (error) {
    if (!(error instanceof BrainApiError)) throw error;
    throw new Error(`Brain refused a replay session with --model ${model}: ${describeFailure(error)}`);
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
  const sent = await client.sendMessage(sessionId, content);
  // a replay sends each message once the last turn ended: it is never queued
  let after = "seq" in sent ? sent.seq : 0;
  for (;;) {
    const events = await client.events(sessionId, { after });
    if (events.some((event) => endsTurn(event.type))) return;
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
