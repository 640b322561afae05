// Local stand-ins for the three search providers, answering as their real APIs do: the same
// paths, methods, auth headers, success shapes and error bodies (Brave's ErrorResponse with its
// X-RateLimit-* headers, Tavily's {"detail": {"error"}} with its 432/433 plan statuses, SearXNG's
// Flask error pages), so the service's readers meet what production sends.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeProvider {
  /** Where the service is told the provider is (its config's `search.url`). */
  url: string;
  received: Received[];
  /** The next request is answered with this failure instead (then back to normal). */
  failNext(failure: string): void;
  close(): Promise<void>;
}

type Answer = { status: number; headers?: Record<string, string>; body: string };
type Handler = (request: Received, failure: string | undefined) => Answer;

async function startFake(path: string, handle: Handler): Promise<FakeProvider> {
  const received: Received[] = [];
  let failure: string | undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: new URL(req.url ?? "/", "http://fake"),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(request);
      const failing = failure;
      failure = undefined;
      const answer =
        request.url.pathname === path
          ? handle(request, failing)
          : { status: 404, headers: { "content-type": "text/plain" }, body: "Not Found" };
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    failNext: (next) => {
      failure = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Three results the way every fake describes them, in each provider's own fields. */
export const PAGES = [
  {
    title: "Node.js 20 is now LTS",
    url: "https://nodejs.org/en/blog/release/v20",
    text: "Node.js 20 enters long-term support.",
    date: "2023-10-24T00:00:00",
  },
  {
    title: "undici: an HTTP/1.1 client",
    url: "https://undici.nodejs.org/",
    text: "An HTTP/1.1 client, written from scratch for Node.js.",
    date: undefined,
  },
  {
    title: "Node.js — About",
    url: "https://nodejs.org/en/about",
    text: "As an asynchronous event-driven JavaScript runtime…",
    date: "2024-01-02T10:20:30",
  },
];

const braveRateHeaders = (remaining: string) => ({
  "x-ratelimit-limit": "1, 2000",
  "x-ratelimit-policy": "1;w=1, 2000;w=2592000",
  "x-ratelimit-remaining": remaining,
  "x-ratelimit-reset": "1, 1419704",
});

function braveError(status: number, code: string, detail: string, component: string): string {
  return JSON.stringify({
    type: "ErrorResponse",
    error: { id: randomUUID(), status, code, detail, meta: { component } },
    time: Math.floor(Date.now() / 1000),
  });
}

/** Brave Search API: GET /res/v1/web/search, the key in X-Subscription-Token. */
export function startFakeBrave(key: string): Promise<FakeProvider> {
  return startFake("/res/v1/web/search", (request, failure) => {
    if (request.headers["x-subscription-token"] !== key) {
      return {
        status: 422,
        body: braveError(
          422,
          "SUBSCRIPTION_TOKEN_INVALID",
          "The provided subscription token is invalid.",
          "authentication",
        ),
      };
    }
    if (failure === "rate_limited") {
      return {
        status: 429,
        headers: braveRateHeaders("0, 1500"),
        body: braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", "rate_limiter"),
      };
    }
    // the same refusal with none of the headers that say when to retry
    if (failure === "rate_limited_without_headers") {
      return {
        status: 429,
        body: braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", "rate_limiter"),
      };
    }
    if (failure === "quota") {
      return {
        status: 429,
        headers: braveRateHeaders("1, 0"),
        body: braveError(429, "QUOTA_LIMITED", "Request quota limit exceeded for plan.", "rate_limiter"),
      };
    }
    if (failure === "server_error")
      return {
        status: 500,
        headers: { "content-type": "text/html" },
        body: "<html><body>Internal Server Error</body></html>",
      };
    const q = request.url.searchParams.get("q") ?? "";
    if (q === "" || q.length > 400) {
      return {
        status: 422,
        body: braveError(422, "VALIDATION", "Unable to validate request parameter(s)", "validation"),
      };
    }
    const count = Number(request.url.searchParams.get("count") ?? 20);
    const results = PAGES.slice(0, count).map((page) => ({
      title: page.title,
      url: page.url,
      is_source_local: false,
      is_source_both: false,
      description: page.text,
      ...(page.date && { page_age: page.date, age: "October 24, 2023" }),
      profile: {
        name: "Node.js",
        url: page.url,
        long_name: new URL(page.url).hostname,
        img: "https://imgs.search.brave.com/x",
      },
      language: "en",
      family_friendly: true,
      type: "search_result",
      subtype: "generic",
      is_live: false,
      meta_url: {
        scheme: "https",
        netloc: new URL(page.url).hostname,
        hostname: new URL(page.url).hostname,
        favicon: "",
        path: "› en",
      },
    }));
    return {
      status: 200,
      headers: braveRateHeaders("0, 1499"),
      body: JSON.stringify({
        type: "search",
        query: {
          original: q,
          show_strict_warning: false,
          is_navigational: false,
          is_news_breaking: false,
          spellcheck_off: true,
          country: "us",
          bad_results: false,
          should_fallback: false,
          postal_code: "",
          city: "",
          header_country: "",
          more_results_available: true,
          state: "",
        },
        mixed: {
          type: "mixed",
          main: results.map((_, index) => ({ type: "web", index, all: false })),
          top: [],
          side: [],
        },
        ...(q.includes("nothing matches") ? {} : { web: { type: "search", results, family_friendly: true } }),
      }),
    };
  });
}

const tavilyError = (status: number, error: string, headers: Record<string, string> = {}): Answer => ({
  status,
  headers,
  body: JSON.stringify({ detail: { error } }),
});

/** Tavily: POST /search with a JSON body, the key as Authorization: Bearer tvly-…. */
export function startFakeTavily(key: string): Promise<FakeProvider> {
  return startFake("/search", (request, failure) => {
    if (request.method !== "POST")
      return { status: 405, body: JSON.stringify({ detail: "Method Not Allowed" }) };
    if (request.headers.authorization !== `Bearer ${key}`)
      return tavilyError(401, "Unauthorized: missing or invalid API key.");
    if (failure === "rate_limited") {
      return tavilyError(
        429,
        "Your request has been blocked due to excessive requests. Please reduce rate of requests.",
        { "retry-after": "17" },
      );
    }
    if (failure === "plan_limit") {
      return tavilyError(
        432,
        "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com",
      );
    }
    if (failure === "payg_limit") {
      return tavilyError(
        433,
        "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.",
      );
    }
    const body = JSON.parse(request.body) as { query?: string; max_results?: number; time_range?: string };
    if (
      body.time_range !== undefined &&
      !["day", "week", "month", "year", "d", "w", "m", "y"].includes(body.time_range)
    ) {
      return tavilyError(400, "Invalid time_range. Must be one of: day, week, month, year, d, w, m, y.");
    }
    if (!body.query) return tavilyError(400, "Query is missing.");
    const results = PAGES.slice(0, body.max_results ?? 5).map((page, i) => ({
      url: page.url,
      title: page.title,
      content: page.text,
      score: 0.9 - i / 10,
      raw_content: null,
    }));
    return {
      status: 200,
      body: JSON.stringify({
        query: body.query,
        follow_up_questions: null,
        answer: null,
        images: [],
        results,
        response_time: 1.67,
        request_id: randomUUID(),
      }),
    };
  });
}

const flaskPage = (status: number, title: string, text: string): Answer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8" },
  body: `<!doctype html>\n<html lang=en>\n<title>${status} ${title}</title>\n<h1>${title}</h1>\n<p>${text}</p>\n`,
});

/** A SearXNG instance: GET /search?q=…&format=json; `jsonEnabled: false` is its default settings.yml. */
export function startFakeSearxng(options: { jsonEnabled: boolean }): Promise<FakeProvider> {
  return startFake("/search", (request, failure) => {
    if (request.url.searchParams.get("format") === "json" && !options.jsonEnabled) {
      return flaskPage(
        403,
        "Forbidden",
        "You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.",
      );
    }
    if (failure === "rate_limited") {
      return flaskPage(
        429,
        "Too Many Requests",
        "This user has exceeded an allotted request count. Try again later.",
      );
    }
    const q = request.url.searchParams.get("q") ?? "";
    const results = PAGES.map((page, i) => ({
      url: page.url,
      title: page.title,
      content: page.text,
      publishedDate: page.date ?? null,
      thumbnail: "",
      engine: "duckduckgo",
      template: "default.html",
      parsed_url: ["https", new URL(page.url).hostname, new URL(page.url).pathname, "", "", ""],
      img_src: "",
      priority: "",
      engines: ["duckduckgo", "brave"],
      positions: [i + 1],
      score: 4 - i,
      category: "general",
    }));
    return {
      status: 200,
      body: JSON.stringify({
        query: q,
        number_of_results: 0,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [["wikidata", "timeout"]],
      }),
    };
  });
}
