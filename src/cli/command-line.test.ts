import { describe, expect, it } from "vitest";
import { httpUrlProblem, parseCommandLine } from "./command-line.js";

describe("parseCommandLine", () => {
  it("gives the one argument and the flags given, in any order", () => {
    expect(parseCommandLine(["--model", "m", "ses_1"], "SESSION_ID", ["url", "model"])).toEqual({
      argument: "ses_1",
      flags: { model: "m" },
    });
  });

  it("answers --help and -h before anything else", () => {
    expect(parseCommandLine(["a", "b", "--help"], "SESSION_ID", [])).toEqual({ help: true });
    expect(parseCommandLine(["-h"], "URL", [])).toEqual({ help: true });
  });

  it("names the argument it wants exactly one of, and refuses flags it does not know", () => {
    expect(parseCommandLine([], "SESSION_ID", [])).toEqual({ problem: "give exactly one SESSION_ID" });
    expect(parseCommandLine(["a", "b"], "URL", [])).toEqual({ problem: "give exactly one URL" });
    expect(parseCommandLine(["a", "--nope", "x"], "URL", ["url"])).toEqual({
      problem: expect.stringMatching(/^Unknown option '--nope'/),
    });
    expect(parseCommandLine(["a", "--url"], "URL", ["url"])).toEqual({
      problem: expect.stringMatching(/^Option '--url <value>' argument missing/),
    });
  });
});

describe("httpUrlProblem", () => {
  it.each(["http://127.0.0.1:8080", "HTTPS://brain.example/api"])("accepts %s", (url) => {
    expect(httpUrlProblem(url)).toBeUndefined();
  });
  it.each(["127.0.0.1:8080", "ftp://host/x", "http://", "http://[::1"])("refuses %s, quoting it", (url) => {
    expect(httpUrlProblem(url)).toBe(`"${url}" is not an http or https URL`);
  });
});
