import { describe, expect, it } from "vitest";
import type { LiveEvent, SessionEvent, StoredEvent } from "../../protocol/events.js";
import { SessionOrder } from "./session-order.js";

const stored = (seq: number): StoredEvent => ({
  seq,
  type: "message.user",
  at: "",
  data: { content: `m${seq}` },
});
const live = (n: number): LiveEvent => ({
  type: "model.delta",
  at: "",
  data: { text: String(n), attempt: 1 },
});
const names = (events: SessionEvent[]) =>
  events.map((event) =>
    "seq" in event ? event.seq : `live${event.type === "model.delta" ? event.data.text : ""}`,
  );

describe("SessionOrder", () => {
  it("holds what arrives before its start is known, then releases only what follows the start", () => {
    const order = new SessionOrder();
    expect(order.pushStored([stored(4), stored(5)])).toEqual([]);
    expect(order.pushLive(5, live(1))).toEqual([]);
    expect(names(order.start(4))).toEqual([5, "live1"]);
    expect(order.delivered).toBe(5);
  });

  it("releases stored events in seq order with no gap, whatever order they arrive in", () => {
    const order = new SessionOrder();
    order.start(0);
    const seen: SessionEvent[] = [];
    for (const seq of [3, 1, 2, 6, 5, 4, 7]) seen.push(...order.pushStored([stored(seq)]));
    expect(names(seen)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(order.waiting).toBe(0);
  });

  it("releases each stored event once", () => {
    const order = new SessionOrder();
    order.start(2);
    expect(names(order.pushStored([stored(1), stored(2), stored(3)]))).toEqual([3]);
    expect(order.pushStored([stored(3)])).toEqual([]);
  });

  it("puts a live event right after the stored event it follows", () => {
    const order = new SessionOrder();
    order.start(0);
    expect(order.pushStored([stored(2)])).toEqual([]);
    expect(order.pushLive(2, live(1))).toEqual([]);
    // after what was released already: at once, even while later ones wait
    expect(names(order.pushLive(0, live(2)))).toEqual(["live2"]);
    expect(names(order.pushStored([stored(1)]))).toEqual([1, 2, "live1"]);
  });

  it("names the gap that holds events back", () => {
    const order = new SessionOrder();
    order.start(3);
    order.pushStored([stored(7), stored(6)]);
    expect(order.gap()).toEqual({ after: 3, before: 6 });
    expect(names(order.pushStored([stored(4), stored(5)]))).toEqual([4, 5, 6, 7]);
    expect(order.gap()).toBeUndefined();
  });

  it("reports as missing a stored event that only a live event behind it, or the log's end, says is there", () => {
    const order = new SessionOrder();
    order.start(3);
    expect(order.pushLive(5, live(1))).toEqual([]);
    // nothing after seq 4 and 5 was held: the live event waiting for them is what shows the gap
    expect(order.gap()).toEqual({ after: 3, before: 6 });
    expect(names(order.pushStored([stored(4), stored(5)]))).toEqual([4, 5, "live1"]);
    expect(order.gap()).toBeUndefined();
    // the log reaches 7, though nothing of it came here
    order.reaches(7);
    expect(order.gap()).toEqual({ after: 5, before: 8 });
    expect(names(order.pushStored([stored(6), stored(7)]))).toEqual([6, 7]);
    expect(order.gap()).toBeUndefined();
  });
});
