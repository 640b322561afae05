import { describe, expect, it } from "vitest";
import { runNode } from "../helpers/cli.js";
import { needs } from "../helpers/host-needs.js";
import { createTestDatabase } from "../helpers/postgres.js";

describe("npm run cluster (the README's many-instances command)", needs("postgres"), () => {
  it("moves a session between two instances on one database, and stops all it started", async () => {
    const database = await createTestDatabase();
    try {
      const run = runNode("examples/cluster.mjs", [], { DATABASE_URL: database.url });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const lines = run.stdout.split("\n");
      const seen = (type: string) =>
        lines.filter((line) => line.startsWith("  B sees") && line.includes(` ${type}`));
      // both turns ran, one from a message to A and one to B, and B saw both live
      expect(lines.filter((line) => line.startsWith("message sent to "))).toEqual([
        "message sent to A",
        "message sent to B",
      ]);
      expect(seen("turn.completed")).toHaveLength(2);
      expect(seen("tool.result").map((line) => /echo ok → "hello from (\w)"/.exec(line)?.[1])).toEqual([
        "A",
        "B",
      ]);
      expect(seen("session.closed")).toHaveLength(1);
      expect(run.stdout).toMatch(/A reads the same 16 events/);
      const urls = /brain A on (\S+), brain B on (\S+),/.exec(run.stdout);
      for (const url of [urls?.[1], urls?.[2]]) {
        await expect(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
      }
    } finally {
      await database.drop();
    }
  });

  it("says what to set when DATABASE_URL is not set", () => {
    const run = runNode("examples/cluster.mjs", []);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/set DATABASE_URL to a PostgreSQL database/);
  });
});
