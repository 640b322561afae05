import { type Static, Type } from "@sinclair/typebox";
import type { ConfigResult as Result } from "../../kit/service-cli.js";
import { envSecrets, loadServiceConfig } from "../../kit/service-config.js";
import { check, compile, defaultsOf, StringEnum, TaggedUnion } from "../../protocol/validation.js";
import { type Listen, listenOf, urlProblem } from "../../runtime/addresses.js";
import type { Secret } from "../../runtime/secret.js";
import { hostEntryProblem } from "./address-policy.js";

const strict = { additionalProperties: false } as const;
const EnvName = Type.String({
  pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
  description: "Name of an environment variable.",
});
const Seconds = (fallback: number, maximum: number, description: string) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum, default: fallback, description }));
const Count = (fallback: number, minimum: number, maximum: number, description: string) =>
  Type.Optional(Type.Integer({ minimum, maximum, default: fallback, description }));
const ProviderUrl = (fallback: string | undefined, description: string) =>
  fallback === undefined
    ? Type.String({ minLength: 1, description })
    : Type.Optional(Type.String({ minLength: 1, default: fallback, description }));
const DEFAULT_URLS = {
  brave: "https://api.search.brave.com/res/v1/web/search",
  tavily: "https://api.tavily.com/search",
} as const;
const SearchCommon = {
  timeout_seconds: Seconds(15, 120, "Per search request to the provider."),
};

const BraveSchema = Type.Object(
  {
    provider: Type.Literal("brave"),
    api_key_env: EnvName,
    url: ProviderUrl(DEFAULT_URLS.brave, "The web search endpoint."),
    ...SearchCommon,
  },
  strict,
);
const TavilySchema = Type.Object(
  {
    provider: Type.Literal("tavily"),
    api_key_env: EnvName,
    url: ProviderUrl(DEFAULT_URLS.tavily, "The search endpoint."),
    ...SearchCommon,
  },
  strict,
);
const SearxngSchema = Type.Object(
  {
    provider: Type.Literal("searxng"),
    url: ProviderUrl(
      undefined,
      'Your instance, such as "http://127.0.0.1:8888"; its settings.yml must list json in search.formats.',
    ),
    ...SearchCommon,
  },
  strict,
);

export const FetchSchema = Type.Object(
  {
    max_bytes: Count(5_242_880, 1024, 104_857_600, "The most bytes a fetch downloads (after decompression)."),
    max_chars: Count(100_000, 1000, 10_000_000, "The most characters of content a fetch returns."),
    timeout_seconds: Seconds(30, 600, "For a whole fetch: every redirect, the download and robots.txt."),
    connect_timeout_seconds: Seconds(10, 120, "For each connection."),
    max_redirects: Count(5, 0, 20, "Redirects followed; each hop is checked like the first URL."),
    respect_robots_txt: Type.Optional(
      Type.Boolean({
        default: true,
        description: "Refuse pages the site's robots.txt disallows for user_agent.",
      }),
    ),
    user_agent: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        pattern: "^[\\x20-\\x7e]+$",
        default: "BrainWeb/0.1 (an AI agent's web fetch tool)",
        description: "Sent with every fetch and matched against robots.txt.",
      }),
    ),
  },
  strict,
);

const HostEntries = (description: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: 10_000, description }));

export const WebConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(Type.String({ default: "127.0.0.1:8095", description: "host:port to bind." })),
    token_env: Type.String({
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      description: "The environment variable holding the bearer token Brain sends (the binding's token_env).",
    }),
    search: Type.Optional(TaggedUnion("provider", [BraveSchema, TavilySchema, SearxngSchema])),
    fetch: Type.Optional(FetchSchema),
    hosts: Type.Optional(
      Type.Object(
        {
          allow: HostEntries(
            "Hosts a fetch may reach even at loopback, private or link-local addresses: names, *.domain, addresses, CIDR ranges.",
          ),
          deny: HostEntries("Hosts no fetch may reach: names, *.domain, addresses, CIDR ranges."),
        },
        strict,
      ),
    ),
    cache: Type.Optional(
      Type.Object(
        {
          ttl_seconds: Count(300, 0, 86_400, "How long a tenant's result is served again; 0: no cache."),
          max_entries: Count(
            1000,
            1,
            1_000_000,
            "Results kept, over all tenants; the least recently used go first.",
          ),
        },
        strict,
      ),
    ),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
  },
  { ...strict, title: "Web service config" },
);

type RawConfig = Static<typeof WebConfigSchema>;
type RawSearch = NonNullable<RawConfig["search"]>;
const FETCH_DEFAULTS = defaultsOf(FetchSchema);

export type SearchConfig =
  | { provider: "brave" | "tavily"; url: string; apiKey: Secret; timeoutMs: number }
  | { provider: "searxng"; url: string; timeoutMs: number };

export interface FetchLimits {
  maxBytes: number;
  maxChars: number;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxRedirects: number;
  respectRobotsTxt: boolean;
  userAgent: string;
}

export interface WebConfig {
  listen: Listen;
  token: Secret;
  search: SearchConfig | undefined;
  fetch: FetchLimits;
  hosts: { allow: string[]; deny: string[] };
  cache: { ttlMs: number; maxEntries: number };
  logLevel: string;
}

export type ConfigResult = Result<WebConfig>;

const validate = compile<RawConfig>(WebConfigSchema);

/** Validate a parsed config and resolve defaults and secrets; every problem is reported. */
export function resolveWebConfig(raw: unknown, env: NodeJS.ProcessEnv): ConfigResult {
  const checked = check(validate, raw);
  if (!checked.ok) return checked;
  const config = checked.value;
  const problems: string[] = [];
  const secret = envSecrets(env, problems);
  const listen = listenOf(config.listen ?? "127.0.0.1:8095", problems);
  const token = secret("token_env", config.token_env, "the token Brain sends");
  const search = config.search && resolveSearch(config.search, secret, problems);
  const hosts = { allow: config.hosts?.allow ?? [], deny: config.hosts?.deny ?? [] };
  for (const list of ["allow", "deny"] as const) {
    hosts[list].forEach((entry, i) => {
      const problem = hostEntryProblem(entry);
      if (problem) problems.push(`hosts.${list}[${i}]: ${problem}`);
    });
  }
  const fetch = { ...FETCH_DEFAULTS, ...config.fetch };
  if (!listen || !token || problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    config: {
      listen,
      token,
      search,
      fetch: {
        maxBytes: fetch.max_bytes,
        maxChars: fetch.max_chars,
        timeoutMs: Math.round(fetch.timeout_seconds * 1000),
        connectTimeoutMs: Math.round(fetch.connect_timeout_seconds * 1000),
        maxRedirects: fetch.max_redirects,
        respectRobotsTxt: fetch.respect_robots_txt,
        userAgent: fetch.user_agent,
      },
      hosts,
      cache: {
        ttlMs: (config.cache?.ttl_seconds ?? 300) * 1000,
        maxEntries: config.cache?.max_entries ?? 1000,
      },
      logLevel: config.log_level ?? "info",
    },
  };
}

function resolveSearch(
  search: RawSearch,
  secret: ReturnType<typeof envSecrets>,
  problems: string[],
): SearchConfig | undefined {
  const url = search.provider === "searxng" ? search.url : (search.url ?? DEFAULT_URLS[search.provider]);
  const problem = urlProblem(url);
  if (problem) problems.push(`search.url: ${problem}`);
  const timeoutMs = Math.round((search.timeout_seconds ?? 15) * 1000);
  if (search.provider === "searxng") return { provider: "searxng", url, timeoutMs };
  const what = search.provider === "brave" ? "your Brave Search API key" : "your Tavily API key";
  const apiKey = secret("search.api_key_env", search.api_key_env, what);
  return apiKey && { provider: search.provider, url, apiKey, timeoutMs };
}

export function loadWebConfig(path: string, env: NodeJS.ProcessEnv = process.env): ConfigResult {
  return loadServiceConfig(path, env, (raw, env) => resolveWebConfig(raw, env));
}
