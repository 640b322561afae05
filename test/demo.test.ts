import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runNode } from "./helpers/cli.js";

describe("npm run demo (the README's first command)", () => {
  it("runs a session that calls echo, prints its events as they happen, and stops all it started", async () => {
    const demo = runNode("examples/demo.mjs", []);
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    const lines = demo.stdout.split("\n");
    const order = [
      "session.created",
      "message.user",
      "tool.call",
      "tool.result",
      "turn.completed",
      "session.closed",
    ];
    const positions = order.map((type) =>
      lines.findIndex((line) => line.includes(` ${type} `) || line.endsWith(` ${type}`)),
    );
    expect(
      positions.every((at) => at >= 0),
      demo.stdout,
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(demo.stdout).toMatch(/tool\.result\s+echo ok → "hello from the demo"/);

    // the echo service and Brain are gone, and so is the demo's store
    const echoUrl = /echo tool service on (\S+)/.exec(demo.stdout)?.[1];
    const brain = /brain on (\S+) \(store (\S+)\)/.exec(demo.stdout);
    expect(echoUrl && brain, demo.stdout).toBeTruthy();
    for (const url of [echoUrl, brain?.[1]]) {
      await expect(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    }
    expect(existsSync(brain?.[2] ?? "")).toBe(false);
  });
});
