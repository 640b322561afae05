import { writeFileSync } from "node:fs";
import {
  type CommandIo,
  describeFailure,
  fetchRecording,
  processIo,
  sessionCommand,
} from "./session-command.js";

const HELP = `brain script — turn a stored session's model steps into a script for the scripted model

Usage:
  brain script SESSION_ID [--out FILE] [--url URL]

Reads the session's events from Brain with the key in BRAIN_API_KEY and prints its model steps
(text, tool calls with their arguments, stop reason, usage) as a JSON array: the "script" of a
"scripted" model entry, or a session's config.script. A session with that script, sent the same
messages, replays the conversation against the tools as they are now, with no provider key and
no network. \`brain replay\` does all of that in one go. A failed or interrupted turn gets a step
that ends it there with an empty answer (stop_reason "recorded_turn_ended"), so that the turns
after it play their own steps; notes on those and on template markers go to stderr.

With --out, writes FILE instead: the script together with the session's user messages, tools,
system prompt, max_steps and events — its messages and tool results, so keep it as you keep the
session. \`brain replay FILE --model NAME\` plays it on any Brain with a scripted model NAME and
the same tools, without this Brain's store, a provider key or a network.

Options:
  --out FILE    write the recording file FILE (JSON) instead of printing the script
  --url URL     Brain's URL (default: $BRAIN_URL, else http://127.0.0.1:8080)
  -h, --help    this help`;

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const command = sessionCommand("script", HELP, args, io, ["out"]);
  if (typeof command === "number") return command;
  const { out } = command.options;
  try {
    const { file, notes } = await fetchRecording(command.client, command.argument);
    for (const note of notes) io.stderr(`note: ${note}\n`);
    if (out === undefined) {
      io.stdout(`${JSON.stringify(file.script, null, 2)}\n`);
      return 0;
    }
    writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`);
    io.stdout(
      `wrote ${out}: ${file.messages.length} messages, ${file.script.length} model steps; replay it with \`brain replay ${out} --model NAME\`\n`,
    );
    return 0;
  } catch (error) {
    io.stderr(`brain script: ${describeFailure(error)}\n`);
    return 1;
  }
}
