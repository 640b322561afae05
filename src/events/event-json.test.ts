import { describe, expect, it } from "vitest";
import { type NewEvent, type SessionEvent, StoredEventSchema } from "../../protocol/events.js";
import { isoNow } from "../iso-now.js";
import { appendedEvent, eventJson } from "./event-json.js";

const result = (text: string) => ({
  call_id: "call_1",
  name: "echo",
  is_error: false,
  content: [{ type: "text", text }],
  duration_ms: 1.5,
});
const AT = "2026-12-04T10:00:00.000Z";

describe("eventJson", () => {
  it("builds an appended event around the JSON its data was stored as, serializing the data once", () => {
    const data = result('quotes " and \\ and \u2028 survive');
    const stored = JSON.stringify(data);
    const event = appendedEvent(7, { type: "tool.result", data } as NewEvent, AT, stored);
    expect(eventJson(event)).toBe(JSON.stringify({ seq: 7, type: "tool.result", data, at: AT }));
    // what the frame carries is what was committed, whatever happens to the object after
    data.content[0] = { type: "text", text: "changed after it was stored" };
    expect(JSON.parse(eventJson(event)).data).toEqual(JSON.parse(stored));
  });

  it("writes every stored event's type and an event time as JSON.stringify would", () => {
    const types = StoredEventSchema.anyOf.map((schema) => schema.properties.type.const);
    expect(types).toContain("tool.result");
    for (const [index, type] of types.entries()) {
      const at = isoNow(Date.UTC(2026, 11, 31, 23, 59, 59, 999) + index);
      const event = appendedEvent(1, { type, data: {} } as NewEvent, at, "{}");
      expect(eventJson(event)).toBe(JSON.stringify({ seq: 1, type, data: {}, at }));
    }
  });

  it("makes an appended event that reads as the plain stored event it stands for", () => {
    const data = result("x");
    const event = appendedEvent(3, { type: "tool.result", data } as NewEvent, AT, JSON.stringify(data));
    const plain = { seq: 3, type: "tool.result", data, at: AT };
    expect(Object.keys(event)).toEqual(Object.keys(plain));
    expect(JSON.stringify(event)).toBe(JSON.stringify(plain));
    expect({ ...event }).toEqual(plain);
  });

  it("serializes a copy of an appended event whole, so a copy with other data says so", () => {
    const data = result("as stored");
    const event = appendedEvent(4, { type: "tool.result", data } as NewEvent, AT, JSON.stringify(data));
    const redacted = { ...event, data: result("[redacted]") } as SessionEvent;
    expect(JSON.parse(eventJson(redacted)).data.content[0].text).toBe("[redacted]");
  });

  it("serializes live events, and stored events this process did not write, whole", () => {
    const live = { type: "model.delta", at: AT, data: { text: "hi", attempt: 1 } };
    expect(eventJson(live as SessionEvent)).toBe(JSON.stringify(live));
    const read = { seq: 3, type: "tool.result", at: AT, data: result("x") };
    expect(eventJson(read as SessionEvent)).toBe(JSON.stringify(read));
  });
});
