import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { runTurn, storedOnly } from "./helpers/turns.js";
import { delayedStore } from "./seams/delayed-store.js";

let service: ToolService;
let brain: TestBrain;

beforeAll(async () => {
  service = await startToolService({
    "/echo": async (call, res) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
      sendJson(res, textResult(JSON.stringify(call.body.arguments)));
    },
  });
  brain = await startBrain(
    {
      tools: [
        {
          name: "echo",
          description: "Echo.",
          input_schema: { type: "object" },
          url: service.at("/echo"),
          tenants: ["acme"],
        },
      ],
    },
    { start: { openStore: (path) => delayedStore(new SqliteStore(path), 20) } },
  );
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

describe("live events over a store whose appends resolve out of order", () => {
  it("reach every live client in seq order with no gap, live-only events included", async () => {
    const client = brain.client();
    const calls = Array.from({ length: 6 }, (_, i) => ({ name: "echo", arguments: { i } }));
    const turns = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const session = await client.createSession({
          tools: ["echo"],
          script: [{ tool_calls: calls }, { tool_calls: calls }, { text: "done" }],
        });
        return { id: session.id, seen: await runTurn(client, session.id, "go", 20_000) };
      }),
    );
    for (const { id, seen } of turns) {
      const stored = await client.events(id);
      const live = storedOnly(seen);
      // the client saw, live, exactly what was stored after its stream began, in order
      expect(live.map((event) => event.seq)).toEqual(
        stored.filter((event) => event.seq > (live[0]?.seq ?? 0) - 1).map((event) => event.seq),
      );
      expect(live.filter((event) => event.type === "tool.result")).toHaveLength(12);
    }
  });
});
