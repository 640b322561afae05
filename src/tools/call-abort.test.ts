import { describe, expect, it } from "vitest";
import { CallAbort } from "./call-abort.js";

describe("CallAbort following a turn's signal", () => {
  it("ends every call that follows the signal when it fires, each with its own reason", () => {
    const turn = new AbortController();
    const heard: unknown[] = [];
    const first = new CallAbort((reason) => heard.push(reason));
    const [second, left] = [new CallAbort(() => undefined), new CallAbort(() => undefined)];
    first.follow(turn.signal, "first");
    second.follow(turn.signal, "second");
    left.follow(turn.signal, "left");
    left.unfollow(turn.signal);
    turn.abort();
    expect([first.aborted, first.reason, second.aborted, second.reason]).toEqual([
      true,
      "first",
      true,
      "second",
    ]);
    expect(heard).toEqual(["first"]);
    expect(left.aborted).toBe(false);
  });

  it("ends a call at once when the signal fired before it followed", () => {
    const turn = new AbortController();
    turn.abort();
    const call = new CallAbort(() => undefined);
    call.follow(turn.signal, "late");
    expect([call.aborted, call.reason]).toEqual([true, "late"]);
  });

  it("keeps one listener on the signal however many calls follow it", () => {
    const turn = new AbortController();
    const counted = { adds: 0 };
    const add = turn.signal.addEventListener.bind(turn.signal);
    turn.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      counted.adds++;
      add(...args);
    }) as typeof add;
    for (let index = 0; index < 20; index++) {
      const call = new CallAbort(() => undefined);
      call.follow(turn.signal, index);
      call.unfollow(turn.signal);
    }
    expect(counted.adds).toBe(1);
  });
});
