// Run one session against a running Brain with the tools named in BRAIN_TOOLS, printing its
// events live, then close it. The "Local tools & approvals" path of the README:
//
//   BRAIN_TOOLS=echo,wait,ask_approval node examples/session.mjs "deploy the website"
//
// BRAIN_URL      Brain's URL (default http://127.0.0.1:8080)
// BRAIN_API_KEY  the tenant's API key (required)
// BRAIN_TOOLS    comma-separated tools to enable (default: every tool in your catalog)
// BRAIN_MODEL    the model entry to use (default "default")
// BRAIN_WAIT_SECONDS  how long to wait for a Brain that is still starting (default 10)
// With a scripted model the session carries a script that calls each enabled tool once, in order;
// a real model gets none and decides for itself.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (!existsSync(join(root, "dist/src/client/client.js"))) {
  console.error("Brain is not built: run `npm ci` (it builds), or `npm run build`.");
  process.exit(1);
}
const { BrainApiError, BrainClient } = await import("../dist/src/client/client.js");
const { formatEvent } = await import("../dist/src/client/format-event.js");

const url = process.env.BRAIN_URL ?? "http://127.0.0.1:8080";
const apiKey = process.env.BRAIN_API_KEY;
if (!apiKey) {
  console.error("set BRAIN_API_KEY to your tenant's API key (the tenant's api_key_env in the host config)");
  process.exit(2);
}
const waitSeconds = Number(process.env.BRAIN_WAIT_SECONDS ?? 10);
if (!(waitSeconds >= 0)) {
  console.error(`BRAIN_WAIT_SECONDS must be a number of seconds, not ${process.env.BRAIN_WAIT_SECONDS}`);
  process.exit(2);
}
const message = process.argv.slice(2).join(" ") || "hello from examples/session.mjs";

/**
 * Arguments the scripted model uses for the local tools and the web service's; {{message}} is the
 * user's message (for web_fetch, the URL to read).
 */
const SAMPLE_ARGUMENTS = {
  echo: { text: "{{message}}" },
  wait: { seconds: 3 },
  ask_approval: { question: "May the agent go ahead with: {{message}}?" },
  web_search: { query: "{{message}}" },
  web_fetch: { url: "{{message}}" },
};

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.interrupted"]);

const client = new BrainClient(url, apiKey);

/**
 * The catalog, retrying while nothing listens at `url` for up to `waitSeconds`: the README starts
 * Brain in the background just before this, and it may not listen yet. Any answer, even an error,
 * means Brain is up, so only a refused connection is retried.
 */
async function firstCatalog() {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.catalog();
    } catch (error) {
      if (error?.cause?.code !== "ECONNREFUSED" || Date.now() >= deadline) throw error;
      if (attempt === 0) console.error(`waiting up to ${waitSeconds} s for Brain at ${url} to start…`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

let tools;
try {
  const catalog = await firstCatalog();
  tools = process.env.BRAIN_TOOLS
    ? process.env.BRAIN_TOOLS.split(",")
        .map((name) => name.trim())
        .filter(Boolean)
    : catalog.tools.map((tool) => tool.name);
} catch (error) {
  if (error instanceof BrainApiError) {
    console.error(`Brain at ${url} answered ${error.status} ${error.code}: ${error.message}`);
  } else if (error?.cause?.code === "ECONNREFUSED") {
    console.error(
      `cannot reach Brain at ${url}: nothing listens there (waited ${waitSeconds} s). Is it running? Is BRAIN_URL right?`,
    );
  } else {
    console.error(
      `cannot reach Brain at ${url}: ${error.cause?.code ?? error.cause?.message ?? error.message} (is BRAIN_URL right?)`,
    );
  }
  process.exit(1);
}
const scripted = tools.filter((name) => name in SAMPLE_ARGUMENTS);
for (const name of tools.filter((name) => !(name in SAMPLE_ARGUMENTS))) {
  console.log(`(the scripted model has no sample arguments for ${name}; a real model can call it)`);
}
const script = [
  ...scripted.map((name) => ({ tool_calls: [{ name, arguments: SAMPLE_ARGUMENTS[name] }] })),
  { text: scripted.length > 0 ? "Done. The last tool answered: {{result}}" : "You said: {{message}}" },
];

const model = process.env.BRAIN_MODEL ?? "default";
let session;
try {
  session = await client.createSession({ model, tools, script }).catch((error) => {
    // a real model takes no script (Brain names the field it refuses): it decides for itself
    if (error.code !== "invalid_request" || !error.message.startsWith("config.script:")) throw error;
    return client.createSession({ model, tools });
  });
} catch (error) {
  console.error(`Brain refused the session: ${error.message}`);
  process.exit(1);
}
console.log(`session ${session.id} on ${url}, tools: ${tools.join(", ") || "(none)"}\n`);

// Ctrl-C interrupts the turn (Brain cancels the model call and every tool request), then closes.
process.once("SIGINT", () => {
  console.log("\ninterrupting…");
  client.interrupt(session.id).catch(() => {});
});

let ending = "turn.failed";
const announced = new Set();
for await (const event of client.streamEvents(session.id)) {
  console.log(formatEvent(event));
  const waiting = event.type === "tool.progress" && event.data.data?.status === "waiting_for_operator";
  if (waiting && !announced.has(event.data.data.approval_id)) {
    const id = event.data.data.approval_id;
    announced.add(id);
    console.log(
      `       waiting for a person: answer on the local-tools page (/operator) or run \`node dist/services/local-tools/main.js answer ${id} yes\``,
    );
  }
  if (event.type === "session.created") await client.sendMessage(session.id, message);
  if (TURN_ENDS.has(event.type)) {
    ending = event.type;
    break;
  }
}
await client.close(session.id);
console.log(`\nsession ${session.id} closed`);
process.exitCode = ending === "turn.completed" ? 0 : 1;
