import { describe, expect, it } from "vitest";
import { decodeContent, decodeTextWindow } from "../../services/storage/encoding.js";
import { refusal, unwrap } from "./backend-conformance.js";

describe("decodeContent", () => {
  it("takes text as UTF-8", () => {
    expect(unwrap(decodeContent("héllo", "utf8"))).toEqual(Buffer.from("héllo"));
  });

  it("takes base64 in either alphabet, padded or not, with line breaks", () => {
    const bytes = Buffer.from([0xfb, 0xff, 0x00, 0x10]);
    expect(unwrap(decodeContent("+/8AEA==", "base64"))).toEqual(bytes);
    expect(unwrap(decodeContent("-_8AEA", "base64"))).toEqual(bytes);
    expect(unwrap(decodeContent("+/8A\nEA==\n", "base64"))).toEqual(bytes);
  });

  // a digit too many, or padding that does not fill the last quartet, is no base64 either
  it.each(["not base64!", "abcde", "ab=c", "AAAAA=", "A=", "==", "AA="])(
    "refuses %j as base64",
    (content) => {
      expect(refusal(decodeContent(content, "base64"))).toBe("invalid_argument");
    },
  );
});

describe("decodeTextWindow", () => {
  const text = Buffer.from("a€b😀c"); // a(1) €(3) b(1) 😀(4) c(1)

  it("decodes a whole object", () => {
    expect(unwrap(decodeTextWindow(text, true, true))).toEqual({ text: "a€b😀c", skipped: 0, length: 10 });
  });

  it("moves a character cut at the start or the end out of the window", () => {
    // bytes 2..7: the tail of €, b, and the first two bytes of 😀
    expect(unwrap(decodeTextWindow(text.subarray(2, 7), false, false))).toEqual({
      text: "b",
      skipped: 2,
      length: 1,
    });
    // bytes 0..6: a € b and one byte of 😀
    expect(unwrap(decodeTextWindow(text.subarray(0, 6), true, false))).toEqual({
      text: "a€b",
      skipped: 0,
      length: 5,
    });
  });

  it("refuses bytes that are not UTF-8", () => {
    expect(refusal(decodeTextWindow(Buffer.from([0x61, 0xff, 0x62]), true, true))).toBe("not_utf8");
    expect(refusal(decodeTextWindow(Buffer.from([0x61, 0xe2, 0x82]), true, true))).toBe("not_utf8");
  });
});
