import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { StoreUnavailableError } from "../src/store/store.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { overridden } from "./helpers/overridden-store.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { waitForEvents } from "./helpers/turns.js";

// A store whose reads of one session fail, as an unreachable PostgreSQL's do, after the first one
// that comes once `failAfterFirstRead` names it: the read a takeover makes first succeeds, any later
// one fails.
let failAfterFirstRead: string | undefined;
let readsOfIt = 0;
function flakyReads(store: SqliteStore): SqliteStore {
  return overridden(store, {
    getSession: (own) => (id) => {
      if (id === failAfterFirstRead && readsOfIt++ > 0)
        return Promise.reject(new StoreUnavailableError("PostgreSQL cannot be reached"));
      return own(id);
    },
  });
}

let service: ToolService;
let brain: TestBrain;

beforeAll(async () => {
  service = await startToolService({ "/guarded": (_call, res) => sendJson(res, textResult("done")) });
  brain = await startBrain(
    {
      tools: [
        {
          name: "guarded",
          description: "Needs a person's yes.",
          input_schema: { type: "object" },
          url: service.at("/guarded"),
          tenants: ["acme"],
          approval: "always",
        },
      ],
    },
    { start: { openStore: (path) => flakyReads(new SqliteStore(path)) } },
  );
});
afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

describe("a turn that waits for approval, taken up by the next start", () => {
  it("goes on with the session it read, though a later read of it fails: approved, it is sent", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [{ name: "guarded", arguments: {} }] }, { text: "approved: {{result}}" }],
    });
    await client.sendMessage(session.id, "go");
    await waitForEvents(client, session.id, (events) =>
      events.some((event) => event.type === "tool.approval_requested"),
    );

    failAfterFirstRead = session.id;
    await brain.restart();
    failAfterFirstRead = undefined;

    const after = brain.client();
    const asked = (await after.events(session.id)).find((event) => event.type === "tool.approval_requested");
    if (asked?.type !== "tool.approval_requested") throw new Error("no approval asked");
    await after.answerApproval(session.id, asked.data.call_id, { decision: "approve" });
    const events = await waitForEvents(after, session.id, (stored) =>
      stored.some((event) => event.type === "turn.completed"),
    );
    expect(events.find((event) => event.type === "tool.result")?.data).toMatchObject({
      name: "guarded",
      content: [{ type: "text", text: "done" }],
    });
    expect(service.calls.filter((call) => call.path === "/guarded")).toHaveLength(1);
  });
});
