import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { BrainClient, type Session, type StreamStatus } from "../client/client.js";
import { formatEvent } from "../client/format-event.js";
import { ChatState } from "./chat-state.js";
import { ChatView } from "./chat-view.js";
import { httpUrlProblem } from "./command-line.js";
import {
  type CommandIo,
  DEFAULT_BRAIN_URL,
  describeFailure,
  processIo,
  readAllEvents,
} from "./session-command.js";

const HELP = `brain chat — talk to a session of Brain from a terminal

Usage:
  brain chat [--session ID] [--tools a,b] [--model M] [--url URL] [--key-env NAME]

Opens a new session (with --tools and --model) or resumes one (--session ID, whose history is shown
first), then sends each line you type as a message and shows the turn as it happens: the model's
text as it streams, each tool call with its arguments, its progress, and its result with its outcome
and duration.

While a turn runs, Ctrl-C interrupts it; a second Ctrl-C, or Ctrl-C or Ctrl-D when nothing runs,
leaves (the session stays open: resume it with --session).

In the chat:
  /tools    the session's tools and what they do
  /events   the session's stored events, one line each
  /approve [CALL_ID]          approve the call that waits for approval (the only one, or CALL_ID)
  /deny [CALL_ID] [REASON]    deny it, saying why
  /close    close the session and leave
  /help     this list

Options:
  --session ID     resume this session
  --tools a,b      a new session's tools (default: none)
  --model M        a new session's model (default: the host config's "default")
  --url URL        Brain's URL (default: $BRAIN_URL, else ${DEFAULT_BRAIN_URL})
  --key-env NAME   the environment variable holding your API key (default: BRAIN_API_KEY)
  -h, --help       this help`;

const CHAT_HELP = `/tools  the session's tools · /events  its stored events · /approve, /deny [reason]  answer a call that waits · /close  close it and leave · /help  this
Ctrl-C interrupts a running turn; a second Ctrl-C, or Ctrl-D, leaves`;

interface ChatOptions {
  client: BrainClient;
  session?: string;
  tools: string[];
  model?: string;
}

function parse(args: string[], io: CommandIo): ChatOptions | number {
  const usage = (message: string) => {
    io.stderr(`brain chat: ${message}\n\n${HELP}\n`);
    return 2;
  };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        session: { type: "string" },
        tools: { type: "string" },
        model: { type: "string" },
        url: { type: "string" },
        "key-env": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    return usage((error as Error).message);
  }
  if (values.help) {
    io.stdout(`${HELP}\n`);
    return 0;
  }
  const url = (values.url as string | undefined) ?? io.env.BRAIN_URL ?? DEFAULT_BRAIN_URL;
  const problem = httpUrlProblem(url);
  if (problem) return usage(problem);
  const keyEnv = (values["key-env"] as string | undefined) ?? "BRAIN_API_KEY";
  const key = io.env[keyEnv];
  if (!key) return usage(`set ${keyEnv} to your tenant's API key`);
  const session = values.session as string | undefined;
  if (session !== undefined && (values.tools !== undefined || values.model !== undefined)) {
    return usage("--tools and --model choose a new session's; a resumed session keeps its own");
  }
  const tools = ((values.tools as string | undefined) ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return {
    client: new BrainClient(url, key),
    tools,
    ...(session !== undefined && { session }),
    ...(values.model !== undefined && { model: values.model as string }),
  };
}

export async function run(args: string[], io: CommandIo = processIo): Promise<number> {
  const options = parse(args, io);
  if (typeof options === "number") return options;
  const { client } = options;
  let session: Session;
  try {
    session = options.session
      ? await client.getSession(options.session)
      : await client.createSession({ tools: options.tools, ...(options.model && { model: options.model }) });
  } catch (error) {
    io.stderr(`brain chat: ${describeFailure(error)}\n`);
    return 1;
  }
  return chat(client, session, io);
}

/** The chat itself: history, then lines in and events out until the person leaves or the session closes. */
async function chat(client: BrainClient, session: Session, io: CommandIo): Promise<number> {
  const view = new ChatView(io.stdout);
  io.stdout(`session ${session.id} · /help for commands\n`);
  const history = await readAllEvents(client, session.id);
  // from the history, not the session's status: the turn may have ended since that was read
  const state = new ChatState();
  for (const event of history) {
    view.show(event);
    state.follow(event);
  }
  const { waiting } = state;
  let interrupting = false;
  const leaving = new AbortController();
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: "> " });
  const prompt = () => {
    if (!state.running && !leaving.signal.aborted) rl.prompt();
  };
  const leave = () => {
    if (leaving.signal.aborted) return;
    leaving.abort();
    rl.close();
  };
  const attempt = (action: Promise<unknown>) =>
    action.catch((error: unknown) => {
      io.stdout(`  (${describeFailure(error)})\n`);
      prompt();
    });

  const onStatus = (status: StreamStatus) => {
    if (status.state === "reconnecting")
      io.stdout(`  (connection lost: ${status.error.message}; reconnecting)\n`);
  };
  const watching = (async () => {
    const stream = client.streamEvents(session.id, {
      after: history.at(-1)?.seq ?? 0,
      signal: leaving.signal,
      onStatus,
    });
    for await (const event of stream) {
      view.show(event);
      if (state.follow(event)) {
        interrupting = false;
        prompt();
      }
    }
    // the session closed, or the person left
    leave();
  })();

  rl.on("line", (line) => {
    const text = line.trim();
    if (text === "") return prompt();
    if (text === "/help") {
      io.stdout(`${CHAT_HELP}\n`);
      return prompt();
    }
    if (text === "/tools") {
      return attempt(
        client.catalog().then((catalog) => {
          const offered = new Map(catalog.tools.map((tool) => [tool.name, tool.description]));
          if (session.config.tools.length === 0) io.stdout("  this session has no tools\n");
          for (const name of session.config.tools)
            io.stdout(`  ${name}: ${offered.get(name) ?? "(no longer offered)"}\n`);
          prompt();
        }),
      );
    }
    if (text === "/events") {
      return attempt(
        readAllEvents(client, session.id).then((events) => {
          for (const event of events) io.stdout(`${formatEvent(event)}\n`);
          prompt();
        }),
      );
    }
    if (text === "/close") return attempt(client.close(session.id));
    const answer = /^\/(approve|deny)(?:\s+(call_\S+))?(?:\s+(.*))?$/.exec(text);
    if (answer) {
      const [, command, named, reason] = answer;
      const callId = named ?? (waiting.size === 1 ? [...waiting][0] : undefined);
      if (!callId) {
        io.stdout(
          waiting.size === 0
            ? "  no call waits for approval\n"
            : `  ${waiting.size} calls wait: name one (${[...waiting].join(", ")})\n`,
        );
        return prompt();
      }
      const decision = command === "approve" ? "approve" : "deny";
      return attempt(
        client
          .answerApproval(session.id, callId, { decision, ...(reason && { reason }) })
          .then(() => prompt()),
      );
    }
    if (text.startsWith("/")) {
      io.stdout(`  unknown command ${text.split(/\s/)[0]}: ${CHAT_HELP}\n`);
      return prompt();
    }
    if (state.running) {
      io.stdout("  (a turn is running: wait for it, or Ctrl-C to interrupt it)\n");
      return;
    }
    state.running = true;
    attempt(
      client.sendMessage(session.id, line).catch((error: unknown) => {
        state.running = false;
        throw error;
      }),
    );
  });
  rl.on("SIGINT", () => {
    if (state.running && !interrupting) {
      interrupting = true;
      io.stdout("\n  (interrupting; Ctrl-C again leaves)\n");
      attempt(client.interrupt(session.id));
      return;
    }
    io.stdout("\n");
    leave();
  });
  rl.on("close", leave);
  prompt();
  try {
    await watching;
  } catch (error) {
    io.stderr(`brain chat: ${describeFailure(error)}\n`);
    return 1;
  }
  io.stdout(`left session ${session.id}; resume it with: brain chat --session ${session.id}\n`);
  return 0;
}
