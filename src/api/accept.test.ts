import { describe, expect, it } from "vitest";
import { acceptsEventStream } from "./accept.js";

describe("acceptsEventStream", () => {
  it.each([
    ["text/event-stream", true],
    ["TEXT/Event-Stream", true],
    ["application/json, text/event-stream;q=0.5", true],
    ["text/event-stream ; charset=utf-8", true],
    ["text/event-stream;q=0", false],
    ["text/event-stream; q=0.0", false],
    ["text/event-streamx", false],
    ["application/json", false],
    ["*/*", false],
    [undefined, false],
  ])("%j → %j", (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});
