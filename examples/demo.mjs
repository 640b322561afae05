// Brain's main job, end to end on the embedded defaults: the example echo service, Brain on
// SQLite with the scripted model, and a session that calls echo, its events printed live.
// Everything it starts, it stops. Run: npm run demo
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (!existsSync(join(root, "dist/src/client/client.js"))) {
  console.error("Brain is not built: run `npm ci` (it builds), or `npm run build`.");
  process.exit(1);
}
const { BrainClient } = await import("../dist/src/client/client.js");
const { formatEvent } = await import("../dist/src/client/format-event.js");

const work = mkdtempSync(join(tmpdir(), "brain-demo-"));
const env = {
  ...process.env,
  BRAIN_API_KEY: randomBytes(24).toString("base64url"),
  BRAIN_TOOLS_KEY: randomBytes(24).toString("base64url"),
};
const children = [];

/** Start a process and resolve with the first stdout line `pick` accepts. */
function start(name, args, extraEnv, pick) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${name} exited with code ${code} before it was ready`)));
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const found = pick(line);
      if (found) resolve(found);
    });
  });
}

async function stopAll() {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
  rmSync(work, { recursive: true, force: true });
}

try {
  const echoUrl = await start(
    "echo service",
    ["examples/tools/server.mjs"],
    { PORT: "0" },
    (line) => line.match(/listening on (\S+)/)?.[1],
  );
  console.log(`echo tool service on ${echoUrl}`);

  const config = JSON.parse(readFileSync(join(root, "examples/brain.json"), "utf8"));
  config.listen = "127.0.0.1:0";
  delete config.public_url;
  delete config.$schema;
  config.store = { kind: "sqlite", path: join(work, "brain.db") };
  config.tools[0].url = `${echoUrl}/tools/echo`;
  writeFileSync(join(work, "brain.json"), JSON.stringify(config, null, 2));

  const brainUrl = await start(
    "brain",
    ["dist/src/cli/main.js", "-config", join(work, "brain.json")],
    {},
    (line) => {
      try {
        return JSON.parse(line).url;
      } catch {
        return undefined;
      }
    },
  );
  console.log(`brain on ${brainUrl} (store ${join(work, "brain.db")})\n`);

  const client = new BrainClient(brainUrl, env.BRAIN_API_KEY);
  const session = await client.createSession({ model: "default", tools: ["echo"] });
  console.log(`session ${session.id}\n`);
  const watching = (async () => {
    for await (const event of client.streamEvents(session.id)) {
      console.log(formatEvent(event));
      if (["turn.completed", "turn.failed", "turn.interrupted"].includes(event.type))
        await client.close(session.id);
    }
  })();
  await client.sendMessage(session.id, "hello from the demo");
  await watching;
  console.log("\nsession closed; stopping the echo service and Brain");
} catch (error) {
  console.error(`demo failed: ${error.message}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
