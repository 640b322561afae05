import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ToolManifest } from "../../protocol/manifest.js";
import { hostConfigFor } from "../../src/cli/tools-config-command.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { ROOT } from "../helpers/cli.js";
import { type StartedProcess, startProcess, toolServiceUrlFromLog } from "../helpers/processes.js";
import { ofType, runTurn, waitForEvents } from "../helpers/turns.js";
import { type FakeProvider, PAGES, startFakeBrave } from "./fake-search-apis.js";
import { type PageServer, startPageServer } from "./page-server.js";

const token = `web-token-${randomBytes(12).toString("hex")}`;
const braveKey = `BSA${randomBytes(12).toString("hex")}`;
let dir: string;
let pages: PageServer;
let brave: FakeProvider;
let web: StartedProcess & { ready: string };
let brain: TestBrain;
let bindings: Record<string, unknown>[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "web-brain-"));
  pages = await startPageServer();
  brave = await startFakeBrave(braveKey);
  const configPath = join(dir, "web.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      listen: "127.0.0.1:0",
      token_env: "WEB_TOOLS_KEY",
      search: { provider: "brave", api_key_env: "BRAVE_SEARCH_API_KEY", url: brave.url },
      hosts: { allow: ["127.0.0.1"] },
      fetch: { respect_robots_txt: true },
    }),
  );
  // the service as its own process, as an operator runs it
  web = await startProcess(
    [join(ROOT, "dist/services/web/main.js"), "--config", configPath],
    { WEB_TOOLS_KEY: token, BRAVE_SEARCH_API_KEY: braveKey },
    toolServiceUrlFromLog,
  );
  const listed = await request(`${web.ready}/tools`, { headers: { authorization: `Bearer ${token}` } });
  const manifest = (await listed.body.json()) as ToolManifest;
  const { tools } = hostConfigFor(manifest, {
    base: `${web.ready}/tools`,
    tokenEnv: "WEB_TOOLS_KEY",
    tenant: "acme",
    apiKeyEnv: "KEY_ACME",
    listen: "127.0.0.1:0",
    store: "brain.db",
  });
  bindings = (tools ?? []) as Record<string, unknown>[];
  brain = await startBrain({ tools }, { env: { WEB_TOOLS_KEY: token } });
});
afterAll(async () => {
  await brain?.stop();
  await web?.stop();
  await brave?.close();
  await pages?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("brain tools config binds both tools, each waited for past its own time limit", () => {
  expect(bindings.map(({ name, timeout_seconds }) => ({ name, timeout_seconds }))).toEqual([
    { name: "web_search", timeout_seconds: 45 },
    { name: "web_fetch", timeout_seconds: 60 },
  ]);
});

it("a session searches the web and reads a page through the real service, and no key shows anywhere", async () => {
  const client = brain.client("acme");
  const session = await client.createSession({
    tools: ["web_search", "web_fetch"],
    script: [
      { tool_calls: [{ name: "web_search", arguments: { query: "{{message}}", count: 2 } }] },
      { tool_calls: [{ name: "web_fetch", arguments: { url: `${pages.origin}/article.html` } }] },
      { text: "I read: {{result}}" },
    ],
  });
  const events = await runTurn(client, session.id, "why are the tides late");
  const results = ofType(events, "tool.result").map((event) => event.data);
  expect(results).toMatchObject([
    {
      name: "web_search",
      is_error: false,
      structured_content: {
        query: "why are the tides late",
        provider: "Brave Search",
        results: [{ url: PAGES[0]?.url }, { url: PAGES[1]?.url }],
      },
    },
    {
      name: "web_fetch",
      is_error: false,
      structured_content: {
        final_url: `${pages.origin}/article.html`,
        status: 200,
        content_type: "text/html",
      },
    },
  ]);
  expect(brave.received.at(-1)?.url.searchParams.get("q")).toBe("why are the tides late");
  const reply = ofType(events, "message.assistant").find((event) => event.data.text !== "");
  expect(reply?.data.text).toContain("the **spring tides** arrive forty minutes later");
  expect(events.at(-1)?.type).toBe("turn.completed");

  const everything = `${brain.logs()}\n${web.output.join("\n")}\n${await brain.stored()}`;
  expect(everything).not.toContain(braveKey);
  expect(everything).not.toContain(token);
});

it("a refused fetch reaches the model as an error result with its code", async () => {
  const client = brain.client("acme");
  const session = await client.createSession({
    tools: ["web_fetch"],
    script: [
      {
        tool_calls: [
          { name: "web_fetch", arguments: { url: "http://169.254.169.254/latest/meta-data/iam/" } },
        ],
      },
      { text: "{{result}}" },
    ],
  });
  const events = await runTurn(client, session.id, "read the metadata");
  expect(ofType(events, "tool.result")[0]?.data).toMatchObject({
    is_error: true,
    structured_content: { error: { code: "address_refused" } },
  });
});

it("interrupting the turn closes the service's connection to the site it was reading", async () => {
  const client = brain.client("acme");
  const session = await client.createSession({
    tools: ["web_fetch"],
    script: [
      { tool_calls: [{ name: "web_fetch", arguments: { url: `${pages.origin}/hang` } }] },
      { text: "done" },
    ],
  });
  const before = pages.abandoned.length;
  await client.sendMessage(session.id, "read the page that never ends");
  await expect.poll(() => pages.requests.includes("/hang")).toBe(true);
  await client.interrupt(session.id);
  const events = await waitForEvents(client, session.id, (all) =>
    all.some((event) => event.type === "turn.interrupted"),
  );
  expect(ofType(events, "tool.result")[0]?.data).toMatchObject({ name: "web_fetch", is_error: true });
  await expect.poll(() => pages.abandoned.slice(before)).toContain("/hang");
});
