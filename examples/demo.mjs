// Brain's main job, end to end on the embedded defaults: the example echo service, Brain on
// SQLite with the scripted model, and a session that calls echo, its events printed live.
// Everything it starts, it stops. Run: npm run demo
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Children, requireBuild, root } from "./lib/children.mjs";

requireBuild();
const { BrainClient } = await import("../dist/src/client/client.js");
const { formatEvent } = await import("../dist/src/client/format-event.js");

const work = mkdtempSync(join(tmpdir(), "brain-demo-"));
const env = {
  ...process.env,
  BRAIN_API_KEY: randomBytes(24).toString("base64url"),
  BRAIN_TOOLS_KEY: randomBytes(24).toString("base64url"),
};
const children = new Children(env);

try {
  const echoUrl = await children.startEcho();
  console.log(`echo tool service on ${echoUrl}`);

  const config = JSON.parse(readFileSync(join(root, "examples/brain.json"), "utf8"));
  config.listen = "127.0.0.1:0";
  delete config.public_url;
  delete config.$schema;
  config.store = { kind: "sqlite", path: join(work, "brain.db") };
  config.tools[0].url = `${echoUrl}/tools/echo`;
  writeFileSync(join(work, "brain.json"), JSON.stringify(config, null, 2));

  const brainUrl = await children.startBrain("brain", join(work, "brain.json"));
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
  await children.stopAll();
  rmSync(work, { recursive: true, force: true });
}
