import { recordSession } from "../models/recording.js";
import {
  type CommandIo,
  describeFailure,
  processIo,
  readAllEvents,
  sessionCommand,
} from "./session-command.js";

const HELP = `brain script — turn a stored session's model steps into a script for the scripted model

Usage:
  brain script SESSION_ID [--url URL]

Reads the session's events from Brain with the key in BRAIN_API_KEY and prints its model steps
(text, tool calls with their arguments, stop reason, usage) as a JSON array: the "script" of a
"scripted" model entry, or a session's config.script. A session with that script, sent the same
messages, replays the conversation against the tools as they are now, with no provider key and
no network. \`brain replay\` does all of that in one go. A failed or interrupted turn gets a step
that ends it there with an empty answer (stop_reason "recorded_turn_ended"), so that the turns
after it play their own steps; notes on those and on template markers go to stderr.

Options:
  --url URL     Brain's URL (default: $BRAIN_URL, else http://127.0.0.1:8080)
  -h, --help    this help`;

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const command = sessionCommand("script", HELP, args, io);
  if (typeof command === "number") return command;
  try {
    const recording = recordSession(await readAllEvents(command.client, command.sessionId));
    for (const note of recording.notes) io.stderr(`note: ${note}\n`);
    io.stdout(`${JSON.stringify(recording.script, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`brain script: ${describeFailure(error)}\n`);
    return 1;
  }
}
