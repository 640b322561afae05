import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveWebConfig } from "../../services/web/config.js";
import { ROOT, runNode } from "../helpers/cli.js";

const MAIN = join(ROOT, "dist/services/web/main.js");
let dir: string;
let configPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "web-process-"));
  configPath = join(dir, "web.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const runWeb = (args: string[], env: Record<string, string> = {}) => runNode(MAIN, args, env, { cwd: dir });

describe("the web command", () => {
  it("prints its usage with --help", () => {
    const help = runWeb(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/web -config FILE -check/);
    expect(help.stdout).toMatch(/web_search .* and\nweb_fetch/);
  });

  it("checks the example config with -check", () => {
    const checked = runWeb(["-config", join(ROOT, "services/web/web.example.json"), "-check"], {
      WEB_TOOLS_KEY: "token",
      BRAVE_SEARCH_API_KEY: "BSA-key",
    });
    expect(checked).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/: valid \(search: brave, robots\.txt honoured\)\n$/),
    });
  });

  it("reports every problem of a config, one per line with its path, and never a secret", () => {
    const config = {
      token_env: "WEB_TOKEN",
      search: { provider: "tavily", api_key_env: "TAVILY_API_KEY", url: "ftp://api.tavily.com" },
      hosts: { allow: ["10.0.0.0/40", "intranet"], deny: ["http://bad/"] },
    };
    writeFileSync(configPath, JSON.stringify({ ...config, fetch: { max_redirects: 50, surprise: true } }));
    const schema = runWeb(["-config", configPath, "-check"], { WEB_TOKEN: "web-secret-token" });
    expect(schema.code).toBe(2);
    expect(schema.stderr.trim().split("\n")).toEqual(
      expect.arrayContaining([
        `${configPath}: fetch.max_redirects: must be <= 20`,
        `${configPath}: fetch.surprise: unknown field`,
      ]),
    );

    writeFileSync(configPath, JSON.stringify(config));
    const env = runWeb(["-config", configPath, "-check"], { WEB_TOKEN: "web-secret-token" });
    expect(env.code).toBe(2);
    expect(env.stderr.trim().split("\n")).toEqual([
      `${configPath}: search.url: must be an absolute http or https URL`,
      `${configPath}: search.api_key_env: set the environment variable TAVILY_API_KEY to your Tavily API key`,
      `${configPath}: hosts.allow[0]: "10.0.0.0/40" is not a CIDR range such as 10.0.0.0/8`,
      `${configPath}: hosts.deny[0]: "http://bad/" is not a host name, "*.domain", an IP address or a CIDR range`,
    ]);
    expect(`${schema.stderr}${env.stderr}`).not.toContain("web-secret-token");
  });
});

describe("the web config", () => {
  it("needs no search provider, and fills in every default", () => {
    const resolved = resolveWebConfig({ token_env: "T" }, { T: "token" });
    expect(resolved.ok && { ...resolved.config, token: undefined }).toEqual({
      listen: { host: "127.0.0.1", port: 8095 },
      token: undefined,
      search: undefined,
      fetch: {
        maxBytes: 5_242_880,
        maxChars: 100_000,
        timeoutMs: 30_000,
        connectTimeoutMs: 10_000,
        maxRedirects: 5,
        respectRobotsTxt: true,
        userAgent: "BrainWeb/0.1 (an AI agent's web fetch tool)",
      },
      hosts: { allow: [], deny: [] },
      cache: { ttlMs: 300_000, maxEntries: 1000 },
      logLevel: "info",
    });
  });

  it("uses each provider's documented endpoint unless the config names another", () => {
    const brave = resolveWebConfig(
      { token_env: "T", search: { provider: "brave", api_key_env: "K" } },
      { T: "t", K: "k" },
    );
    expect(brave.ok && brave.config.search?.url).toBe("https://api.search.brave.com/res/v1/web/search");
    const tavily = resolveWebConfig(
      { token_env: "T", search: { provider: "tavily", api_key_env: "K" } },
      { T: "t", K: "k" },
    );
    expect(tavily.ok && tavily.config.search?.url).toBe("https://api.tavily.com/search");
    const searxng = resolveWebConfig({ token_env: "T", search: { provider: "searxng" } }, { T: "t" });
    expect(searxng).toMatchObject({ ok: false, problems: ["search.url: is required"] });
  });
});
