import { describe, expect, it } from "vitest";
import type { ToolResultEventData } from "../../protocol/events.js";
import { resultForModel } from "./result-for-model.js";

const result = (content: ToolResultEventData["content"], extra: Partial<ToolResultEventData> = {}) =>
  ({
    call_id: "call_1",
    name: "read",
    is_error: false,
    content,
    duration_ms: 1,
    ...extra,
  }) as ToolResultEventData;

describe("resultForModel", () => {
  it("leaves a result that fits as it is", () => {
    const small = result([{ type: "text", text: "short" }]);
    expect(resultForModel(small, 1024)).toBe(small);
  });

  it("cuts text to the byte bound, never inside a character, and says what was left out and where", () => {
    const cut = resultForModel(result([{ type: "text", text: "aé".repeat(1000) }]), 1001);
    const [text, note] = cut.content;
    // 1001 bytes end inside an é: the cut ends before it
    expect(text).toEqual({ type: "text", text: `${"aé".repeat(333)}a` });
    expect(note).toEqual({
      type: "text",
      text: "[Brain cut this result for the model: 2000 of its 3000 bytes were left out (the tool's max_model_bytes is 1001). The whole result is in the session's events, in the tool.result of call call_1.]",
    });
  });

  it("sends an image whole or not at all, and cuts structured content sent as JSON text", () => {
    const image = { type: "image" as const, data: "A".repeat(800), mime_type: "image/png" };
    const cut = resultForModel(result([{ type: "text", text: "x".repeat(500) }, image]), 1000);
    expect(cut.content.map((item) => item.type)).toEqual(["text", "text"]);
    const structured = resultForModel(result([], { structured_content: { rows: "row ".repeat(1250) } }), 100);
    expect(structured.structured_content).toBeUndefined();
    expect(structured.content[0]).toEqual({
      type: "text",
      text: `{"rows":"${"row ".repeat(1250)}"}`.slice(0, 100),
    });
  });
});
