import { parseArgs } from "node:util";
import { recordSession } from "../models/recording.js";
import { type CommandIo, connect, describeFailure, processIo, readAllEvents } from "./brain-connection.js";

const HELP = `brain script — turn a stored session's model steps into a script for the scripted model

Usage:
  brain script SESSION_ID [--url URL]

Reads the session's events from Brain with the key in BRAIN_API_KEY and prints its model steps
(text, tool calls with their arguments, stop reason, usage) as a JSON array: the "script" of a
"scripted" model entry, or a session's config.script. A session with that script, sent the same
messages, replays the conversation against the tools as they are now, with no provider key and
no network. \`brain replay\` does all of that in one go. Notes on what a replay will not
reproduce (failed or interrupted turns) go to stderr.

Options:
  --url URL     Brain's URL (default: $BRAIN_URL, else http://127.0.0.1:8080)
  -h, --help    this help`;

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const usage = (message: string) => {
    io.stderr(`brain script: ${message}\n\n${HELP}\n`);
    return 2;
  };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${HELP}\n`);
    return 0;
  }
  if (positionals.length !== 1) return usage("give exactly one SESSION_ID");
  const client = connect(values.url, io.env);
  if ("problem" in client) return usage(client.problem);
  try {
    const recording = recordSession(await readAllEvents(client, positionals[0] as string));
    for (const note of recording.notes) io.stderr(`note: ${note}\n`);
    io.stdout(`${JSON.stringify(recording.script, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`brain script: ${describeFailure(error)}\n`);
    return 1;
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: { url: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
}
