import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeProvider,
  PAGES,
  startFakeBrave,
  startFakeSearxng,
  startFakeTavily,
} from "./fake-search-apis.js";
import { errorCode, startWeb, type TestWeb } from "./web-service.js";

const BRAVE_KEY = "BSA-brave-test-key-0123456789";
const TAVILY_KEY = "tvly-dev-test-key-0123456789";

describe("Brave Search", () => {
  let brave: FakeProvider;
  let web: TestWeb;
  beforeAll(async () => {
    brave = await startFakeBrave(BRAVE_KEY);
    web = await startWeb(
      { search: { provider: "brave", api_key_env: "BRAVE_KEY", url: brave.url }, cache: { ttl_seconds: 60 } },
      { BRAVE_KEY },
    );
  });
  afterAll(async () => {
    await web?.close();
    await brave?.close();
  });

  it("sends the query, count, freshness and site as Brave reads them, and returns the results with their dates", async () => {
    const answer = await web.call("web_search", {
      query: "node lts",
      count: 2,
      freshness: "week",
      site: "nodejs.org",
    });
    expect(answer.is_error).toBe(false);
    const sent = brave.received.at(-1);
    expect(sent?.method).toBe("GET");
    expect(sent?.headers["x-subscription-token"]).toBe(BRAVE_KEY);
    expect(Object.fromEntries(sent?.url.searchParams ?? [])).toMatchObject({
      q: "site:nodejs.org node lts",
      count: "2",
      freshness: "pw",
    });
    expect(answer.structured).toMatchObject({
      query: "node lts",
      provider: "Brave Search",
      cached: false,
      results: [
        { title: PAGES[0]?.title, url: PAGES[0]?.url, snippet: PAGES[0]?.text, published: PAGES[0]?.date },
        { title: PAGES[1]?.title, url: PAGES[1]?.url, snippet: PAGES[1]?.text },
      ],
    });
    expect((answer.structured.results as object[])[1]).not.toHaveProperty("published");
    expect(answer.text).toContain(
      `1. ${PAGES[0]?.title}\n   ${PAGES[0]?.url}\n   published: ${PAGES[0]?.date}`,
    );
  });

  it("serves the same search again from the tenant's cache, saying so, and never another tenant's", async () => {
    const first = await web.call("web_search", { query: "cached question" });
    const requests = brave.received.length;
    const again = await web.call("web_search", { query: "cached question" });
    expect(brave.received.length).toBe(requests);
    expect(again.structured).toMatchObject({ cached: true, results: first.structured.results });
    expect(again.text).toMatch(/^\(from the cache: fetched \d{4}-/);
    const other = await web.call("web_search", { query: "cached question" }, { tenant_id: "globex" });
    expect(other.structured.cached).toBe(false);
    expect(brave.received.length).toBe(requests + 1);
  });

  it("answers no results when Brave has no web section", async () => {
    const answer = await web.call("web_search", { query: "nothing matches this" });
    expect(answer).toMatchObject({ is_error: false, structured: { results: [] } });
    expect(answer.text).toBe('No results for "nothing matches this" (Brave Search).');
  });

  it("says when to retry after a 429 RATE_LIMITED, from the exhausted window's X-RateLimit-Reset", async () => {
    brave.failNext("rate_limited");
    const answer = await web.call("web_search", { query: "too fast" });
    expect(answer.is_error).toBe(true);
    expect(answer.structured).toMatchObject({
      error: { code: "provider_rate_limited" },
      retry_after_seconds: 1,
    });
    expect(answer.text).toBe(
      "Brave Search rate limited the search (RATE_LIMITED: Request rate limit exceeded for plan.): retry after 1 s",
    );
  });

  it("says only 'retry later' after a 429 with no header saying when", async () => {
    brave.failNext("rate_limited_without_headers");
    const answer = await web.call("web_search", { query: "too fast, no headers" });
    expect(errorCode(answer)).toBe("provider_rate_limited");
    expect(answer.structured).not.toHaveProperty("retry_after_seconds");
    expect(answer.text).toBe(
      "Brave Search rate limited the search (RATE_LIMITED: Request rate limit exceeded for plan.): retry later",
    );
  });

  it("tells a used-up monthly quota (429 QUOTA_LIMITED) from a rate limit", async () => {
    brave.failNext("quota");
    const answer = await web.call("web_search", { query: "over quota" });
    expect(errorCode(answer)).toBe("provider_quota");
    expect(answer.text).toMatch(
      /^Brave Search answered 429: QUOTA_LIMITED: Request quota limit exceeded for plan\./,
    );
  });

  it("reports a provider outage as provider_failed with its status", async () => {
    brave.failNext("server_error");
    const answer = await web.call("web_search", { query: "outage" });
    expect(answer.structured).toMatchObject({ error: { code: "provider_failed" }, status: 500 });
  });

  it("reports a key Brave refuses (422 SUBSCRIPTION_TOKEN_INVALID) as provider_auth, never showing the key", async () => {
    const wrong = await startWeb(
      { search: { provider: "brave", api_key_env: "BRAVE_KEY", url: brave.url } },
      { BRAVE_KEY: "BSA-not-the-right-key-777" },
    );
    try {
      const answer = await wrong.call("web_search", { query: "anything" });
      expect(answer.structured).toMatchObject({ error: { code: "provider_auth" }, status: 422 });
      expect(answer.text).toContain(
        "SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid.",
      );
      expect(JSON.stringify(answer)).not.toContain("BSA-not-the-right-key-777");
      expect(wrong.logs()).not.toContain("BSA-not-the-right-key-777");
    } finally {
      await wrong.close();
    }
    expect(web.logs()).not.toContain(BRAVE_KEY);
  });

  it("refuses bad arguments before asking Brave", async () => {
    const requests = brave.received.length;
    const answer = await web.call("web_search", { query: "x", site: "not a host/path", count: 50 });
    expect(answer.is_error).toBe(true);
    expect(brave.received.length).toBe(requests);
  });
});

describe("Tavily", () => {
  let tavily: FakeProvider;
  let web: TestWeb;
  beforeAll(async () => {
    tavily = await startFakeTavily(TAVILY_KEY);
    web = await startWeb(
      { search: { provider: "tavily", api_key_env: "TAVILY_KEY", url: tavily.url } },
      { TAVILY_KEY },
    );
  });
  afterAll(async () => {
    await web?.close();
    await tavily?.close();
  });

  it("POSTs the query as JSON with the key as a bearer token, and returns the results", async () => {
    const answer = await web.call("web_search", {
      query: "undici",
      count: 3,
      freshness: "month",
      site: "nodejs.org",
    });
    const sent = tavily.received.at(-1);
    expect(sent?.method).toBe("POST");
    expect(sent?.headers.authorization).toBe(`Bearer ${TAVILY_KEY}`);
    expect(JSON.parse(sent?.body ?? "")).toEqual({
      query: "undici",
      max_results: 3,
      search_depth: "basic",
      topic: "general",
      time_range: "month",
      include_domains: ["nodejs.org"],
    });
    expect(answer).toMatchObject({
      is_error: false,
      structured: {
        provider: "Tavily",
        results: PAGES.map((page) => ({ title: page.title, url: page.url, snippet: page.text })),
      },
    });
  });

  it.each([
    ["rate_limited", "provider_rate_limited", "retry after 17 s"],
    [
      "plan_limit",
      "provider_quota",
      "Tavily answered 432: This request exceeds your plan's set usage limit.",
    ],
    ["payg_limit", "provider_quota", "Tavily answered 433: This request exceeds the pay-as-you-go limit."],
  ])("answers Tavily's %s as %s", async (failure, code, text) => {
    tavily.failNext(failure);
    const answer = await web.call("web_search", { query: `fail ${failure}` });
    expect(errorCode(answer)).toBe(code);
    expect(answer.text).toContain(text);
    if (failure === "rate_limited") expect(answer.structured.retry_after_seconds).toBe(17);
  });

  it("reports a refused key (401) as provider_auth with Tavily's words", async () => {
    const wrong = await startWeb(
      { search: { provider: "tavily", api_key_env: "TAVILY_KEY", url: tavily.url } },
      { TAVILY_KEY: "tvly-wrong-key-42" },
    );
    try {
      const answer = await wrong.call("web_search", { query: "anything" });
      expect(answer.structured).toMatchObject({ error: { code: "provider_auth" }, status: 401 });
      expect(answer.text).toContain("Unauthorized: missing or invalid API key.");
      expect(wrong.logs()).not.toContain("tvly-wrong-key-42");
    } finally {
      await wrong.close();
    }
  });
});

describe("SearXNG", () => {
  let searxng: FakeProvider;
  let web: TestWeb;
  afterEach(async () => {
    await web?.close();
    await searxng?.close();
  });

  it("asks /search with format=json and time_range, and returns the results with publishedDate", async () => {
    searxng = await startFakeSearxng({ jsonEnabled: true });
    web = await startWeb({ search: { provider: "searxng", url: searxng.url.replace(/\/search$/, "") } });
    const answer = await web.call("web_search", { query: "node", count: 2, freshness: "year" });
    expect(Object.fromEntries(searxng.received.at(-1)?.url.searchParams ?? [])).toEqual({
      q: "node",
      format: "json",
      pageno: "1",
      time_range: "year",
    });
    expect(answer.structured.results).toEqual([
      { title: PAGES[0]?.title, url: PAGES[0]?.url, snippet: PAGES[0]?.text, published: PAGES[0]?.date },
      { title: PAGES[1]?.title, url: PAGES[1]?.url, snippet: PAGES[1]?.text },
    ]);
  });

  it("says how to fix an instance that does not serve JSON (403), and reports its limiter (429)", async () => {
    searxng = await startFakeSearxng({ jsonEnabled: false });
    web = await startWeb({ search: { provider: "searxng", url: searxng.url.replace(/\/search$/, "") } });
    const forbidden = await web.call("web_search", { query: "node" });
    expect(errorCode(forbidden)).toBe("provider_rejected");
    expect(forbidden.text).toContain("add json to search.formats in its settings.yml");

    await searxng.close();
    searxng = await startFakeSearxng({ jsonEnabled: true });
    await web.close();
    web = await startWeb({ search: { provider: "searxng", url: searxng.url.replace(/\/search$/, "") } });
    searxng.failNext("rate_limited");
    const limited = await web.call("web_search", { query: "node" });
    expect(errorCode(limited)).toBe("provider_rate_limited");
    expect(limited.text).toBe(
      "SearXNG rate limited the search (its limiter blocked this client): retry later",
    );
  });

  it("reports an instance that is not there as provider_failed", async () => {
    searxng = await startFakeSearxng({ jsonEnabled: true });
    const gone = searxng.url.replace(/\/search$/, "");
    await searxng.close();
    web = await startWeb({ search: { provider: "searxng", url: gone } });
    const answer = await web.call("web_search", { query: "node" });
    expect(answer.structured).toMatchObject({ error: { code: "provider_failed" } });
    expect(answer.text).toMatch(/^SearXNG could not be reached \(ECONNREFUSED\)/);
  });
});
