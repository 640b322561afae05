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
    const badUrl = {
      name: "a",
      provider: "openai",
      model: "m",
      base_url: "ftp://host",
      api_key_env: "MISSING_KEY",
      context_window: 32_768,
    };
    const result = load([
      badUrl,
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
    const alone = load([badUrl]);
    expect(!alone.ok && alone.problems).toEqual([
      "models[0].api_key_env: environment variable MISSING_KEY is not set",
      "models[0].base_url: must be an absolute http or https URL",
    ]);
  });

  it("knows the window of the providers' current models, and asks for one where it does not", () => {
    const known = load([
      {
        name: "a",
        provider: "anthropic",
        model: "claude-sonnet-4-5-20250929",
        api_key_env: "ANTHROPIC_API_KEY",
      },
      { name: "o", provider: "openai", model: "gpt-4o-mini-2024-07-18", api_key_env: "ANTHROPIC_API_KEY" },
    ]);
    expect(known.ok && known.config.models.get("a")?.window).toEqual({
      contextWindow: 200_000,
      limit: 160_000,
      reserve: 8192,
      strategy: "compact",
      compactionModel: undefined,
    });
    expect(known.ok && known.config.models.get("o")?.window).toMatchObject({
      contextWindow: 128_000,
      reserve: 8192,
    });
    const unknown = load([
      { name: "local", provider: "openai", model: "qwen3:8b", base_url: "http://127.0.0.1:11434/v1" },
      {
        name: "small",
        provider: "anthropic",
        model: "claude-haiku-4-5",
        api_key_env: "ANTHROPIC_API_KEY",
        context_window: 4096,
        max_tokens: 4000,
        context: { compaction_model: "nobody" },
      },
    ]);
    expect(!unknown.ok && unknown.problems).toEqual([
      'models[0].context_window: Brain does not know the window of model "qwen3:8b"; set context_window (and max_output_tokens) in tokens, as its provider documents them',
      "models[1].context_window: 4096 tokens at threshold 0.8 leave no room for the conversation beside an answer of 4000 tokens; lower max_tokens or raise the threshold",
      'models[1].context.compaction_model: no model "nobody" in models',
    ]);
  });
});
