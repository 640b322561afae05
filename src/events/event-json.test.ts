import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { eventJson, storedJson } from "./event-json.js";

const result = (text: string) => ({
  call_id: "call_1",
  name: "echo",
  is_error: false,
  content: [{ type: "text", text }],
  duration_ms: 1.5,
});

describe("eventJson", () => {
  it("builds a stored event around the JSON its data was stored as, serializing the data once", () => {
    const data = result('quotes " and \\ and \u2028 survive');
    const stored = storedJson(data);
    const event = { seq: 7, type: "tool.result", data, at: "2026-12-04T10:00:00.000Z" } as SessionEvent;
    expect(eventJson(event)).toBe(JSON.stringify(event));
    // what the frame carries is what was committed, whatever happens to the object after
    data.content[0] = { type: "text", text: "changed after it was stored" };
    expect(JSON.parse(eventJson(event)).data).toEqual(JSON.parse(stored));
  });

  it("serializes live events, and stored events this process did not write, whole", () => {
    const live = { type: "model.delta", at: "2026-12-04T10:00:00.000Z", data: { text: "hi", attempt: 1 } };
    expect(eventJson(live as SessionEvent)).toBe(JSON.stringify(live));
    const read = { seq: 3, type: "tool.result", at: "2026-12-04T10:00:00.000Z", data: result("x") };
    expect(eventJson(read as SessionEvent)).toBe(JSON.stringify(read));
  });
});
