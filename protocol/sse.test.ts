import { describe, expect, it } from "vitest";
import { SseLimitError, SseParser } from "./sse.js";

const feed = (parser: SseParser, ...chunks: string[]) =>
  chunks.flatMap((chunk) => parser.push(Buffer.from(chunk)));

describe("SseParser", () => {
  const stream =
    ': hello\n\nevent: progress\ndata: {"a":1}\n\nevent: result\ndata: {"b":\ndata: 2}\nid: 7\n\n';
  const expected = [
    { event: "progress", data: '{"a":1}', id: undefined },
    { event: "result", data: '{"b":\n2}', id: "7" },
  ];

  it("parses events, joins data lines and ignores comments", () => {
    expect(feed(new SseParser(() => 1000), stream)).toEqual(expected);
  });

  it("gives the same events however the bytes are split", () => {
    const bytes = Buffer.from(stream);
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser(() => 1000);
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...parser.push(bytes.subarray(i, i + size)));
      expect(events).toEqual(expected);
    }
  });

  it("accepts CRLF and CR line ends, also split between chunks", () => {
    const crlf = stream.replace(/\n/g, "\r\n");
    expect(feed(new SseParser(() => 1000), crlf)).toEqual(expected);
    expect(feed(new SseParser(() => 1000), stream.replace(/\n/g, "\r"))).toEqual(expected);
    const cut = crlf.indexOf("\r\n") + 1;
    expect(feed(new SseParser(() => 1000), crlf.slice(0, cut), crlf.slice(cut))).toEqual(expected);
  });

  it("names an event without an event field 'message', and skips events without data", () => {
    expect(feed(new SseParser(() => 1000), "data: x\n\nevent: result\n\n")).toEqual([
      { event: "message", data: "x", id: undefined },
    ]);
  });

  it("keeps a multi-byte character split across chunks intact", () => {
    const bytes = Buffer.from("event: result\ndata: héllo\n\n");
    const at = bytes.indexOf(0xc3) + 1;
    const parser = new SseParser(() => 1000);
    expect([...parser.push(bytes.subarray(0, at)), ...parser.push(bytes.subarray(at))][0]?.data).toBe(
      "héllo",
    );
  });

  it("throws past the bound of the event's kind, before buffering the rest", () => {
    const limits = (event: string | undefined) => (event === "progress" ? 10 : 100);
    expect(() => feed(new SseParser(limits), `event: progress\ndata: ${"x".repeat(11)}\n\n`)).toThrow(
      SseLimitError,
    );
    expect(feed(new SseParser(limits), `event: result\ndata: ${"x".repeat(50)}\n\n`)).toHaveLength(1);
    // a line without an end is refused as it grows, not when it ends
    const parser = new SseParser(limits);
    expect(() => {
      for (let i = 0; i < 1000; i++)
        parser.push(Buffer.from("event: result\ndata: xxxxxxxxxx".slice(i === 0 ? 0 : 20)));
    }).toThrow(SseLimitError);
    // many data lines add up
    expect(() => feed(new SseParser(limits), `event: progress\n${"data: 1234\n".repeat(3)}\n`)).toThrow(
      SseLimitError,
    );
    // data before its event line is held to the bound of the name that comes after it
    expect(() => feed(new SseParser(limits), `data: ${"x".repeat(50)}\nevent: progress\n\n`)).toThrow(
      SseLimitError,
    );
  });
});

describe("SseParser's retry field", () => {
  it("keeps the reconnection time the stream asked for, from a frame that has no data", () => {
    const parser = new SseParser(() => 1000);
    expect(feed(parser, "retry: 1000\n\n")).toEqual([]);
    expect(parser.retryMs).toBe(1000);
    feed(parser, "retry: soon\n\n");
    expect(parser.retryMs).toBe(1000);
  });
});
