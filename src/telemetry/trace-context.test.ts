import { describe, expect, it } from "vitest";
import { childTraceparent, parseTraceparent } from "./trace-context.js";

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("traceparent", () => {
  it("parses a valid header", () => {
    expect(parseTraceparent(valid)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentId: "00f067aa0ba902b7",
      flags: "01",
    });
  });

  it.each([
    undefined,
    "",
    "garbage",
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    `${valid}-extra`,
    "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
  ])("treats %j as no trace", (header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it("makes a child in the same trace with a fresh span id and the same flags", () => {
    const parent = parseTraceparent(valid);
    if (!parent) throw new Error("unparsed");
    const child = childTraceparent(parent);
    const parsed = parseTraceparent(child);
    expect(parsed?.traceId).toBe(parent.traceId);
    expect(parsed?.flags).toBe("01");
    expect(parsed?.parentId).not.toBe(parent.parentId);
    expect(childTraceparent(parent)).not.toBe(child);
  });
});
