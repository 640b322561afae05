import { BrainApiError, BrainClient, type StoredEvent } from "../client/client.js";
import { type RecordingFile, recordingFile } from "../models/recording.js";
import { httpUrlProblem, parseCommandLine } from "./command-line.js";

/** Where a command writes and what it reads from its environment; tests pass their own. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

export const processIo: CommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

export const DEFAULT_BRAIN_URL = "http://127.0.0.1:8080";

/** A client for the Brain at `url` (else $BRAIN_URL, else the default listen address) with the key in BRAIN_API_KEY. */
export function connect(url: string | undefined, env: NodeJS.ProcessEnv): BrainClient | { problem: string } {
  const base = url ?? env.BRAIN_URL ?? DEFAULT_BRAIN_URL;
  const problem = httpUrlProblem(base);
  if (problem) return { problem };
  const key = env.BRAIN_API_KEY;
  if (!key) return { problem: "set BRAIN_API_KEY to your tenant's API key" };
  return new BrainClient(base, key);
}

/** A command about one stored session: its argument, a client for Brain, and the command's own options. */
export interface SessionCommand {
  /** The session's id, or what the command takes in its place (`what`). */
  argument: string;
  client: BrainClient;
  options: Record<string, string | undefined>;
  /** Report bad usage, with the help; returns the exit code, 2. */
  usage: (message: string) => number;
}

/**
 * Read `brain NAME SESSION_ID [--url URL] [--OPTION VALUE …]`: the command, or the exit code when
 * there is nothing more to do (--help, bad usage). `what` names the argument in a usage problem.
 */
export function sessionCommand(
  name: string,
  help: string,
  args: string[],
  io: CommandIo,
  optionNames: readonly string[] = [],
  what = "SESSION_ID",
): SessionCommand | number {
  const usage = (message: string) => {
    io.stderr(`brain ${name}: ${message}\n\n${help}\n`);
    return 2;
  };
  const parsed = parseCommandLine(args, what, ["url", ...optionNames]);
  if (parsed.help) {
    io.stdout(`${help}\n`);
    return 0;
  }
  if (parsed.problem !== undefined) return usage(parsed.problem);
  const { url, ...options } = parsed.flags;
  const client = connect(url, io.env);
  if ("problem" in client) return usage(client.problem);
  return { argument: parsed.argument, client, options, usage };
}

const PAGE = 10_000;

/** Every stored event of a session, page by page. */
export async function readAllEvents(client: BrainClient, sessionId: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (;;) {
    const page = await client.events(sessionId, { after: events.at(-1)?.seq ?? 0, limit: PAGE });
    // a page may be short because of its size: only an empty one is the end
    if (page.length === 0) return events;
    events.push(...page);
  }
}

/** A stored session as a recording file, and the notes on what a replay of it will not reproduce. */
export async function fetchRecording(
  client: BrainClient,
  sessionId: string,
): Promise<{ file: RecordingFile; notes: string[] }> {
  const session = await client.getSession(sessionId);
  return recordingFile(session, await readAllEvents(client, sessionId));
}

/** What went wrong talking to Brain, for people: the API's code and message, or why it could not be reached. */
export function describeFailure(error: unknown): string {
  if (error instanceof BrainApiError) return `${error.code}: ${error.message}`;
  if (error instanceof TypeError && error.cause instanceof Error) {
    return `cannot reach Brain: ${error.message} (${error.cause.message})`;
  }
  return error instanceof Error ? error.message : String(error);
}
