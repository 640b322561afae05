import { describe, expect, it } from "vitest";
import { AnsweredCalls } from "./answered-calls.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

describe("answered calls", () => {
  it("runs a key once and gives its result again, per tenant, for the same arguments only", async () => {
    const answered = new AnsweredCalls();
    const first = await answered.claim("acme", "k1", '{"a":1}');
    expect(first.kind).toBe("run");
    // a repeat while the first runs waits for its result
    const waiting = answered.claim("acme", "k1", '{"a":1}');
    if (first.kind === "run") first.settle(text("done"));
    expect(await waiting).toEqual({ kind: "replay", result: text("done") });
    expect(await answered.claim("acme", "k1", '{"a":2}')).toEqual({ kind: "conflict" });
    expect((await answered.claim("globex", "k1", '{"a":1}')).kind).toBe("run");
  });

  it("forgets a call that ended without a result, and keys past their time or over the bound", async () => {
    const answered = new AnsweredCalls(2, 1000);
    const lost = await answered.claim("acme", "lost", "{}");
    const retry = answered.claim("acme", "lost", "{}");
    if (lost.kind === "run") lost.settle(undefined);
    expect((await retry).kind).toBe("run");

    const old = await answered.claim("acme", "old", "{}", 0);
    if (old.kind === "run") old.settle(text("old"));
    expect((await answered.claim("acme", "old", "{}", 1001)).kind).toBe("run");

    for (const key of ["a", "b", "c"]) {
      const claim = await answered.claim("acme", key, "{}");
      if (claim.kind === "run") claim.settle(text(key));
    }
    expect((await answered.claim("acme", "a", "{}")).kind).toBe("run");
    expect((await answered.claim("acme", "c", "{}")).kind).toBe("replay");
  });
});
