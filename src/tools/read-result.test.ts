import { describe, expect, it } from "vitest";
import type { ToolBinding } from "../config/load.js";
import { ToolFailure } from "./outcome.js";
import { type CallOutcome, type ResponseBody, type ResponseHead, readToolResponse } from "./read-result.js";

const binding = { maxOutputBytes: 100, validateOutput: undefined } as ToolBinding;
const limits = { maxProgressBytes: 40, secrets: ["s3cret-token"] };
const head = (statusCode: number, contentType?: string, more: Partial<ResponseHead> = {}): ResponseHead => ({
  statusCode,
  contentType,
  contentLength: undefined,
  location: undefined,
  ...more,
});

function bodyOf(read: ToolFailure | ResponseBody): ResponseBody {
  if (read instanceof ToolFailure) throw new Error(`decided by the head: ${read.message}`);
  return read;
}

/** Feed `text` in pieces cut at every `step` bytes: what each piece decided, then the end's. */
function feed(body: ResponseBody, text: string, step: number): (CallOutcome | undefined)[] {
  const bytes = Buffer.from(text);
  const decided: (CallOutcome | undefined)[] = [];
  for (let at = 0; at < bytes.length; at += step) {
    const outcome = body.data(bytes.subarray(at, at + step));
    decided.push(outcome);
    if (outcome) return decided;
  }
  decided.push(body.end());
  return decided;
}

const codeOf = (outcome: CallOutcome | undefined) =>
  outcome instanceof ToolFailure ? outcome.code : outcome;

describe("reading a tool's response as it arrives", () => {
  it("takes a JSON result cut anywhere, inside a character too", () => {
    const text = JSON.stringify({ content: [{ type: "text", text: "déjà vu ✓" }] });
    for (const step of [1, 2, 3, 7, text.length]) {
      const decided = feed(
        bodyOf(readToolResponse(head(200, "application/json; charset=utf-8"), binding, limits, () => {})),
        text,
        step,
      );
      expect(decided.slice(0, -1).every((outcome) => outcome === undefined)).toBe(true);
      expect(decided.at(-1)).toEqual({ is_error: false, content: [{ type: "text", text: "déjà vu ✓" }] });
    }
  });

  it("stops a JSON body at the chunk that crosses max_output_bytes, or at a declared length past it", () => {
    const body = bodyOf(readToolResponse(head(200, "application/json"), binding, limits, () => {}));
    expect(body.data(Buffer.alloc(100, 0x20))).toBeUndefined();
    expect(codeOf(body.data(Buffer.from(" ")))).toBe("output_too_large");
    const declared = readToolResponse(
      head(200, "application/json", { contentLength: "101" }),
      binding,
      limits,
      () => {},
    );
    expect(codeOf(declared as ToolFailure)).toBe("output_too_large");
  });

  it("passes on each progress event in order and ends at the result event, however the stream is cut", () => {
    const stream =
      'event: progress\ndata: {"done":1}\n\n: a comment\r\nevent: progress\r\ndata: {"done":2}\r\n\r\n' +
      'event: result\ndata: {"content":[{"type":"text","text":"ok"}]}\n\nevent: progress\ndata: never read\n\n';
    for (const step of [1, 5, 16, stream.length]) {
      const progress: unknown[] = [];
      const body = bodyOf(
        readToolResponse(head(200, "text/event-stream"), binding, limits, (data) => progress.push(data)),
      );
      const decided = feed(body, stream, step);
      expect(decided.at(-1)).toEqual({ is_error: false, content: [{ type: "text", text: "ok" }] });
      expect(progress).toEqual([{ done: 1 }, { done: 2 }]);
    }
  });

  it("fails an event stream that ends without a result, or whose progress passes its cap", () => {
    const ended = bodyOf(readToolResponse(head(200, "text/event-stream"), binding, limits, () => {}));
    expect(codeOf(feed(ended, 'event: progress\ndata: {"done":1}\n\n', 4).at(-1))).toBe("invalid_result");
    const large = bodyOf(readToolResponse(head(200, "text/event-stream"), binding, limits, () => {}));
    expect(codeOf(feed(large, `event: progress\ndata: "${"x".repeat(60)}"\n\n`, 8).at(-1))).toBe(
      "output_too_large",
    );
  });

  it("decides an error status once it has the snippet's bytes, with a secret cut between chunks redacted", () => {
    const body = bodyOf(readToolResponse(head(503), binding, limits, () => {}));
    expect(body.data(Buffer.from("busy, token s3cr"))).toBeUndefined();
    expect(body.data(Buffer.from("et-token\n"))).toBeUndefined();
    const outcome = body.broken() as ToolFailure;
    expect([outcome.code, outcome.status, outcome.message]).toEqual([
      "http_status",
      503,
      "the tool service answered 503: busy, token [redacted]",
    ]);
    const long = bodyOf(readToolResponse(head(500), binding, limits, () => {}));
    expect(long.data(Buffer.alloc(2047, 0x61))).toBeUndefined();
    expect(codeOf(long.data(Buffer.alloc(20, 0x61)))).toBe("http_status");
  });

  it("names a redirect's location, and refuses a content type it cannot read, quoted as sent", () => {
    const redirect = bodyOf(
      readToolResponse(head(302, undefined, { location: "/elsewhere" }), binding, limits, () => {}),
    );
    expect((redirect.end() as ToolFailure).message).toBe(
      "the tool service answered 302 (a redirect to /elsewhere), which Brain does not follow",
    );
    const html = readToolResponse(
      head(200, "Text/HTML; charset=utf-8"),
      binding,
      limits,
      () => {},
    ) as ToolFailure;
    expect([html.code, html.message]).toEqual([
      "invalid_result",
      'the tool service answered with content type "Text/HTML"; expected application/json or text/event-stream',
    ]);
  });
});
