import { readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ToolManifest } from "../../protocol/manifest.js";
import { hostConfigFor } from "../../src/cli/tools-config-command.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { ofType, runTurn } from "../helpers/turns.js";
import { startStorage, type TestStorage } from "./storage-service.js";

let storage: TestStorage;
let brain: TestBrain;

beforeAll(async () => {
  storage = await startStorage();
  // the bindings `brain tools config` writes from the service's own tool list
  const listed = await request(`${storage.url}/tools`, {
    headers: { authorization: `Bearer ${storage.token}` },
  });
  const manifest = (await listed.body.json()) as ToolManifest;
  const { tools } = hostConfigFor(manifest, {
    base: `${storage.url}/tools`,
    tokenEnv: "STORAGE_TOKEN",
    tenant: "acme",
    apiKeyEnv: "KEY_ACME",
    listen: "127.0.0.1:0",
    store: "brain.db",
  });
  brain = await startBrain(
    { tools: (tools ?? []).map((tool) => ({ ...tool, tenants: ["acme", "globex"] })) },
    { env: { STORAGE_TOKEN: storage.token } },
  );
});
afterAll(async () => {
  await brain?.stop();
  await storage?.close();
});

it("a session in Brain writes a file through the real service and reads it back", async () => {
  const client = brain.client("acme");
  const session = await client.createSession({
    tools: ["storage_write", "storage_read"],
    script: [
      {
        tool_calls: [
          { name: "storage_write", arguments: { path: "notes/from-brain.md", content: "{{message}}" } },
        ],
      },
      { tool_calls: [{ name: "storage_read", arguments: { path: "notes/from-brain.md" } }] },
      { text: "I stored and read back: {{result}}" },
    ],
  });
  const events = await runTurn(client, session.id, "remember the milk");
  const results = events.filter((event) => event.type === "tool.result").map((event) => event.data);
  expect(results).toHaveLength(2);
  expect(results[0]).toMatchObject({
    name: "storage_write",
    is_error: false,
    structured_content: { path: "notes/from-brain.md", size: 17, created: true },
  });
  expect(results[1]).toMatchObject({
    name: "storage_read",
    is_error: false,
    content: [{ type: "text" }, { type: "text", text: "remember the milk" }],
  });
  const reply = ofType(events, "message.assistant").find((event) => event.data.text !== "");
  expect(reply?.data.text).toMatch(/I stored and read back: notes\/from-brain\.md .*\nremember the milk$/s);
  expect(events.at(-1)?.type).toBe("turn.completed");
  // the tenant's file, where the filesystem backend keeps it
  expect(readFileSync(join(storage.root, "objects/tenants/acme/notes/from-brain.md"), "utf8")).toBe(
    "remember the milk",
  );
});

it("another tenant's session cannot see the file, and its refusal reaches the model as an error result", async () => {
  const client = brain.client("globex");
  const session = await client.createSession({
    tools: ["storage_read"],
    script: [
      { tool_calls: [{ name: "storage_read", arguments: { path: "notes/from-brain.md" } }] },
      { text: "{{result}}" },
    ],
  });
  const events = await runTurn(client, session.id, "read it");
  const result = events.find((event) => event.type === "tool.result");
  expect(result?.data).toMatchObject({
    is_error: true,
    structured_content: { error: { code: "not_found" } },
  });
  expect(brain.logs()).not.toContain(storage.token);
  expect(storage.logs()).not.toContain(storage.token);
});
