import { describe, expect, it } from "vitest";
import { parseTraceparent, traceparentOf } from "./trace-context.js";

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("traceparent", () => {
  it("parses a valid header", () => {
    expect(parseTraceparent(valid)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
      isRemote: true,
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

  it("writes back the header it parsed, unsampled flags included", () => {
    const parsed = parseTraceparent(valid);
    if (!parsed) throw new Error("unparsed");
    expect(traceparentOf(parsed)).toBe(valid);
    const unsampled = valid.replace(/01$/, "00");
    expect(traceparentOf(parseTraceparent(unsampled) ?? parsed)).toBe(unsampled);
  });

  it("names no trace for an invalid span context", () => {
    expect(traceparentOf({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 })).toBeUndefined();
  });
});
