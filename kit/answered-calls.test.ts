import { describe, expect, it } from "vitest";
import { AnsweredCalls } from "./answered-calls.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

describe("answered calls", () => {
  it("runs a key once and gives its result again, per tenant and tool, for the same arguments only", async () => {
    const answered = new AnsweredCalls();
    const first = await answered.claim("acme", "charge", "k1", '{"a":1}');
    expect(first.kind).toBe("run");
    // a repeat while the first runs waits for its result
    const waiting = answered.claim("acme", "charge", "k1", '{"a":1}');
    if (first.kind === "run") first.settle(text("done"));
    expect(await waiting).toEqual({ kind: "replay", result: text("done") });
    expect(await answered.claim("acme", "charge", "k1", '{"a":2}')).toEqual({ kind: "conflict" });
    expect((await answered.claim("globex", "charge", "k1", '{"a":1}')).kind).toBe("run");
    expect((await answered.claim("acme", "refund", "k1", '{"a":1}')).kind).toBe("run");
  });

  it("forgets a call that ended without a result, and keys past their time or over the bound", async () => {
    const answered = new AnsweredCalls({ maxEntries: 2, keptMs: 1000 });
    const lost = await answered.claim("acme", "t", "lost", "{}");
    const retry = answered.claim("acme", "t", "lost", "{}");
    if (lost.kind === "run") lost.settle(undefined);
    expect((await retry).kind).toBe("run");

    const old = await answered.claim("acme", "t", "old", "{}", 0);
    if (old.kind === "run") old.settle(text("old"));
    expect((await answered.claim("acme", "t", "old", "{}", 1001)).kind).toBe("run");

    for (const key of ["a", "b", "c"]) {
      const claim = await answered.claim("acme", "t", key, "{}");
      if (claim.kind === "run") claim.settle(text(key));
    }
    expect((await answered.claim("acme", "t", "a", "{}")).kind).toBe("run");
    expect((await answered.claim("acme", "t", "c", "{}")).kind).toBe("replay");
  });

  it("forgets the oldest results when a big one passes the bytes bound", async () => {
    const answered = new AnsweredCalls({ maxBytes: 1000 });
    for (const key of ["a", "b", "c"]) {
      const claim = await answered.claim("acme", "t", key, "{}");
      if (claim.kind === "run") claim.settle(text(key));
    }
    const big = await answered.claim("acme", "t", "big", "{}");
    if (big.kind === "run") big.settle(text("x".repeat(800)));
    expect((await answered.claim("acme", "t", "big", "{}")).kind).toBe("replay");
    expect((await answered.claim("acme", "t", "c", "{}")).kind).toBe("replay");
    expect((await answered.claim("acme", "t", "a", "{}")).kind).toBe("run");
  });
});
