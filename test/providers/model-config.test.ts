import { describe, expect, it } from "vitest";
import { Secret } from "../../runtime/secret.js";
import { resolveConfig } from "../../src/config/load.js";

const KEY = "sk-ant-api03-0123456789abcdefghij";
const env = { BRAIN_API_KEY: "tenant-key", ANTHROPIC_API_KEY: KEY };

function load(models: unknown[]) {
  return resolveConfig(
    { tenants: [{ id: "local", api_key_env: "BRAIN_API_KEY" }], models },
    { env, baseDir: "/tmp" },
  );
}

describe("model entries in the host config", () => {
  it("resolves api_key_env to a Secret that never serializes", () => {
    const loaded = load([
      {
        name: "default",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        api_key_env: "ANTHROPIC_API_KEY",
      },
    ]);
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const entry = loaded.config.models.get("default");
    expect(entry?.apiKey).toBeInstanceOf(Secret);
    expect(entry?.apiKey?.reveal()).toBe(KEY);
    expect(JSON.stringify(entry)).not.toContain(KEY);
  });

  it("holds temperature to each API's range: 0 to 1 for Anthropic, 0 to 2 for OpenAI", () => {
    const entry = (provider: string, temperature: number) => ({
      name: `${provider}-${temperature}`,
      provider,
      model: "m",
      context_window: 100_000,
      api_key_env: "ANTHROPIC_API_KEY",
      temperature,
    });
    expect(load([entry("anthropic", 1), entry("openai", 2)]).ok).toBe(true);
    expect(load([entry("anthropic", 1.5), entry("openai", 2.5)])).toEqual({
      ok: false,
      problems: ["models[0].temperature: must be <= 1", "models[1].temperature: must be <= 2"],
    });
  });

  it("needs a key for a public API, and none for a server of your own", () => {
    expect(load([{ name: "a", provider: "anthropic", model: "claude-sonnet-4-5" }])).toEqual({
      ok: false,
      problems: [
        "models[0].api_key_env: required without base_url; name the environment variable that holds the API key",
      ],
    });
    const local = load([
      {
        name: "local",
        provider: "openai",
        model: "qwen3",
        base_url: "http://127.0.0.1:11434/v1",
        context_window: 32_768,
      },
    ]);
    expect(local.ok && local.config.models.get("local")?.apiKey).toBeUndefined();
  });

  it("reports a bad base_url, an unset key variable, and out-of-range limits, each with its path", () => {
    const result = load([
      {
        name: "a",
        provider: "openai",
        model: "m",
        base_url: "ftp://host",
        api_key_env: "MISSING_KEY",
        context_window: 32_768,
      },
      {
        name: "b",
        provider: "anthropic",
        model: "m",
        context_window: 100_000,
        api_key_env: "ANTHROPIC_API_KEY",
        max_retry_wait_seconds: 0,
      },
    ]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/^models\[1\]\.max_retry_wait_seconds: /)]),
    );
    const badUrl = load([
      {
        name: "a",
        provider: "openai",
        model: "m",
        base_url: "ftp://host",
        api_key_env: "MISSING_KEY",
        context_window: 32_768,
      },
    ]);
    expect(!badUrl.ok && badUrl.problems).toEqual([
      "models[0].api_key_env: environment variable MISSING_KEY is not set",
      "models[0].base_url: must be an absolute http or https URL",
    ]);
  });
});
