import { describe, expect, it } from "vitest";
import { argumentsJson, madeToolCall } from "./tool-call.js";

describe("madeToolCall", () => {
  it("is written by JSON.stringify as the plain call it stands for, in the same order", () => {
    const args = { query: 'a "quoted" word', nested: { list: [1, null, "é"] } };
    expect(JSON.stringify(madeToolCall("call_1", "search", args, undefined))).toBe(
      JSON.stringify({ call_id: "call_1", name: "search", arguments: args }),
    );
    expect(JSON.stringify(madeToolCall("call_2", "search", args, "toolu_9"))).toBe(
      JSON.stringify({ call_id: "call_2", name: "search", arguments: args, provider_call_id: "toolu_9" }),
    );
    expect(Object.keys(madeToolCall("call_3", "search", args, undefined))).toEqual([
      "call_id",
      "name",
      "arguments",
    ]);
  });
});

describe("argumentsJson", () => {
  it("is JSON.stringify's text of a made call's arguments, made once", () => {
    const args: { query: string; limit: number } = { query: "x", limit: 3 };
    const call = madeToolCall("call_1", "search", args, undefined);
    const first = argumentsJson(call);
    expect(first).toBe(JSON.stringify(args));
    // made once: the text is kept with the call, not made again (nothing changes arguments)
    args.limit = 4;
    expect(argumentsJson(call)).toBe(first);
  });

  it("serializes the arguments of a call read back from the log, and any value as JSON.stringify does", () => {
    const read = { call_id: "call_1", name: "search", arguments: { limit: 3 } };
    expect(argumentsJson(read)).toBe('{"limit":3}');
    read.arguments.limit = 4;
    expect(argumentsJson(read)).toBe('{"limit":4}');
    for (const args of ["raw text", 7, null, [1, "two"]])
      expect(argumentsJson(madeToolCall("call_2", "t", args, undefined))).toBe(JSON.stringify(args));
    expect(argumentsJson(madeToolCall("call_3", "t", undefined, undefined))).toBeUndefined();
  });
});
