import { describe, expect, it } from "vitest";
import { envSecret, tokenProblem } from "./secret.js";

describe("tokenProblem", () => {
  it("accepts every visible ASCII character", () => {
    const visible = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
    expect(tokenProblem(visible)).toBeUndefined();
    expect(tokenProblem("sk-ant-api03-AbC_123~+/=")).toBeUndefined();
  });

  it.each([
    ["", "is empty"],
    ["key\n", "holds a newline at its end"],
    ["key\r\n", "holds a carriage return at its end"],
    [" key", "holds a space at its start"],
    ["\tkey", "holds a tab at its start"],
    ["ke y", "holds a space inside"],
    ["ke\u0000y", "holds a control character inside"],
    ["key\u007f", "holds a control character at its end"],
    ["key\u0085", "holds a control character at its end"],
    ["key\u00a0", "holds a space character at its end"],
    ["k\u00e9y", "holds a non-ASCII character inside"],
    ["key\u200b", "holds a non-ASCII character at its end"],
  ])("refuses %j: %s", (value, expected) => {
    expect(tokenProblem(value)).toMatch(new RegExp(`^${expected}(;|$)`));
  });

  it("never shows the value", () => {
    expect(tokenProblem("secret-value\n")).not.toContain("secret-value");
  });
});

describe("envSecret", () => {
  it("reads a usable secret", () => {
    const read = envSecret({ KEY: "abc" }, "KEY");
    expect(read.ok && read.secret.reveal()).toBe("abc");
  });

  it("names the variable in every problem, and uses the caller's words for a missing one", () => {
    expect(envSecret({}, "KEY")).toEqual({ ok: false, problem: "environment variable KEY is not set" });
    expect(envSecret({ KEY: "" }, "KEY")).toEqual({
      ok: false,
      problem: "environment variable KEY is empty",
    });
    expect(envSecret({ KEY: "" }, "KEY", "set KEY")).toEqual({ ok: false, problem: "set KEY" });
    expect(envSecret({}, "KEY", "set KEY")).toEqual({ ok: false, problem: "set KEY" });
    // a value that is there but unusable is named as such, whatever the caller's words for a missing one
    expect(envSecret({ KEY: "abc\n" }, "KEY", "set KEY")).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^environment variable KEY holds a newline at its end;/),
    });
  });
});
