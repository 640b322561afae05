// Two Brain instances on one PostgreSQL, and a session that moves between them: made on A, its
// first message sent to A, its second to B, its events watched live on B all along, closed on B.
// Everything it starts, it stops; its tables stay in the database. Run:
//   DATABASE_URL=postgres://127.0.0.1:5432/test npm run cluster
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Children, requireBuild, root } from "./lib/children.mjs";

requireBuild();
if (!process.env.DATABASE_URL) {
  console.error(
    "set DATABASE_URL to a PostgreSQL database, e.g. DATABASE_URL=postgres://127.0.0.1:5432/test",
  );
  process.exit(2);
}
const { BrainClient } = await import("../dist/src/client/client.js");
const { formatEvent } = await import("../dist/src/client/format-event.js");

const work = mkdtempSync(join(tmpdir(), "brain-cluster-"));
const env = {
  ...process.env,
  BRAIN_API_KEY: randomBytes(24).toString("base64url"),
  BRAIN_TOOLS_KEY: randomBytes(24).toString("base64url"),
};
const children = new Children(env);
const TURN_ENDS = ["turn.completed", "turn.failed", "turn.interrupted"];

try {
  const echoUrl = await children.startEcho();
  const config = JSON.parse(readFileSync(join(root, "examples/brain.json"), "utf8"));
  config.listen = "127.0.0.1:0";
  delete config.public_url;
  delete config.$schema;
  config.store = { kind: "postgres", url_env: "DATABASE_URL" };
  config.tools[0].url = `${echoUrl}/tools/echo`;
  const configPath = join(work, "brain.json");
  writeFileSync(configPath, JSON.stringify(config, null, 2));

  // one config, two processes: any instance answers any request
  const [urlA, urlB] = await Promise.all([
    children.startBrain("brain A", configPath),
    children.startBrain("brain B", configPath),
  ]);
  console.log(`brain A on ${urlA}, brain B on ${urlB}, both on DATABASE_URL\n`);
  const a = new BrainClient(urlA, env.BRAIN_API_KEY);
  const b = new BrainClient(urlB, env.BRAIN_API_KEY);

  // the default model's two steps (call echo, answer), once for each message
  const steps = config.models.find((model) => model.name === "default").script;
  const session = await a.createSession({ model: "default", tools: ["echo"], script: [...steps, ...steps] });
  console.log(`session ${session.id}, made on A, watched on B\n`);
  let turnEnded = () => {};
  const watching = (async () => {
    for await (const event of b.streamEvents(session.id)) {
      console.log(`  B sees  ${formatEvent(event)}`);
      if (TURN_ENDS.includes(event.type)) turnEnded();
    }
  })();
  for (const [name, client] of [
    ["A", a],
    ["B", b],
  ]) {
    const ended = new Promise((resolve) => {
      turnEnded = resolve;
    });
    console.log(`message sent to ${name}`);
    await client.sendMessage(session.id, `hello from ${name}`);
    await ended;
  }
  await b.close(session.id);
  await watching;
  const events = await a.events(session.id);
  console.log(`\nsession closed on B; A reads the same ${events.length} events; stopping everything`);
} catch (error) {
  console.error(`cluster example failed: ${error.message}`);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  rmSync(work, { recursive: true, force: true });
}
