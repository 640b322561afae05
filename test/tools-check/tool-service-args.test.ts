import { describe, expect, it } from "vitest";
import { parseToolServiceArgs } from "../../src/cli/tool-service-args.js";

const URL_ = "http://127.0.0.1:8082/tools/echo";
const parse = (args: string[], env: NodeJS.ProcessEnv = { BRAIN_TOOLS_KEY: "from-env" }) =>
  parseToolServiceArgs(args, ["tenant", "listen"], env);

describe("the arguments of brain tools check|config", () => {
  it("gives the URL, the token from BRAIN_TOOLS_KEY by default, and the command's own flags", () => {
    expect(parse([URL_, "--tenant", "acme"])).toEqual({
      url: URL_,
      token: "from-env",
      flags: { tenant: "acme" },
    });
  });

  it("reads the token from --token-env NAME, which it keeps as a flag, or takes --token VALUE, which it does not", () => {
    expect(parse([URL_, "--token-env", "MY_KEY"], { MY_KEY: "mine" })).toEqual({
      url: URL_,
      token: "mine",
      flags: { "token-env": "MY_KEY" },
    });
    expect(parse(["--token", "given", URL_])).toEqual({ url: URL_, token: "given", flags: {} });
  });

  it("answers help before anything else", () => {
    expect(parse(["--help"])).toEqual({ help: true });
    expect(parse(["-h", "not a url"], {})).toEqual({ help: true });
  });

  it.each([
    [[], "give exactly one URL"],
    [[URL_, URL_], "give exactly one URL"],
    [["ftp://127.0.0.1/tools/echo"], '"ftp://127.0.0.1/tools/echo" is not an http or https URL'],
    [["http://"], '"http://" is not an http or https URL'],
    [[URL_, "--token", "a", "--token-env", "B"], "pass --token-env or --token, not both"],
    [[URL_, "--token", ""], "--token must not be empty"],
    [
      [URL_, "--token-env", "UNSET"],
      /^the environment variable UNSET is not set; set it to the service's token/,
    ],
    [[URL_, "--store", "x"], /^Unknown option '--store'/],
    [[URL_, "--token", "two words"], /^--token holds a space inside;/],
    [[URL_, "--token-env", "STRAY"], /^environment variable STRAY holds a newline at its end;/],
  ])("refuses %j: %s", (args, problem) => {
    expect(parse(args, { STRAY: "token\n" })).toEqual({
      problem: typeof problem === "string" ? problem : expect.stringMatching(problem),
    });
  });
});
