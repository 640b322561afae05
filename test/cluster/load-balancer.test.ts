import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/client/client.js";
import { BrainClient } from "../../src/client/client.js";
import { type BrainProcess, newKeys, startBrainProcess } from "../helpers/brain-process.js";
import { ROOT } from "../helpers/cli.js";
import { NGINX, needs } from "../helpers/host-needs.js";
import { closedPort } from "../helpers/ports.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";

describe("the example nginx config in front of two instances", needs("loadBalancer"), () => {
  let database: TestDatabase;
  let brains: BrainProcess[];
  let prefix: string;
  let balancer: ReturnType<typeof spawn>;
  let url: string;
  let keys: BrainProcess["keys"];

  beforeAll(async () => {
    database = await createTestDatabase();
    keys = newKeys();
    const start = () =>
      startBrainProcess(
        { store: { kind: "postgres", url_env: "DATABASE_URL", lease_seconds: 2 } },
        { DATABASE_URL: database.url },
        keys,
      );
    brains = [await start(), await start()];
    // the example as shipped, with the ports this run was given
    prefix = mkdtempSync(join(tmpdir(), "brain-nginx-"));
    const port = await closedPort();
    const config = readFileSync(join(ROOT, "examples/cluster/nginx.conf"), "utf8")
      .replace("127.0.0.1:8080", new URL(brains[0]?.url as string).host)
      .replace("127.0.0.1:8081", new URL(brains[1]?.url as string).host)
      .replace("127.0.0.1:8088", `127.0.0.1:${port}`);
    writeFileSync(join(prefix, "nginx.conf"), config);
    balancer = spawn(NGINX as string, ["-p", prefix, "-c", join(prefix, "nginx.conf")], { stdio: "inherit" });
    url = `http://127.0.0.1:${port}`;
    await waitForPort(port);
  }, 60_000);

  afterAll(async () => {
    balancer?.kill("SIGQUIT");
    await Promise.all((brains ?? []).map((brain) => brain.stop().catch(() => undefined)));
    await database?.drop();
    if (prefix) rmSync(prefix, { recursive: true, force: true });
  });

  it("carries a session across both instances, its events streamed live through it", async () => {
    const client = new BrainClient(url, keys.acme);
    const session = await client.createSession({
      script: [{ text: "one" }, { text: "two" }, { text: "three" }],
    });
    const seen: SessionEvent[] = [];
    const stream = client.streamEvents(session.id);
    let ends = 0;
    const watching = (async () => {
      for await (const event of stream) {
        seen.push(event);
        // live: each turn's end arrives while the stream is open, before the next message goes
        if (event.type === "turn.completed" && ++ends === 3) return;
      }
    })();
    for (let turn = 1; turn <= 3; turn++) {
      await client.sendMessage(session.id, `message ${turn}`);
      while (ends < turn) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await watching;
    const stored = await client.events(session.id);
    expect(seen.filter((event) => "seq" in event)).toEqual(stored);
    // each instance knows every event, whichever took which request
    for (const brain of brains) expect(await brain.client().events(session.id)).toEqual(stored);
  });

  it("keeps answering when an instance is gone", async () => {
    const client = new BrainClient(url, keys.acme);
    await brains[0]?.kill();
    for (let i = 0; i < 4; i++) {
      const session = await client.createSession();
      expect((await client.getSession(session.id)).id).toBe(session.id);
    }
  });
});

function waitForPort(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const attempt = () => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve();
      });
      socket.on("error", () => {
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}
