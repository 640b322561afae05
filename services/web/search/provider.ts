import { type Dispatcher, fetch } from "undici";
import { check, type Validator } from "../../../protocol/validation.js";
import { fail, type Outcome, ok, type WebErrorCode } from "../errors.js";

export const FRESHNESS = ["day", "week", "month", "year"] as const;
export type Freshness = (typeof FRESHNESS)[number];

export interface SearchRequest {
  query: string;
  count: number;
  freshness?: Freshness;
  /** Only results from this host name (and its subdomains, as the provider reads `site:`). */
  site?: string;
}

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
  /** When the page was published or last changed, as the provider gives it; absent when unknown. */
  published?: string;
}

export interface SearchProvider {
  /** As results and messages name it: "Brave Search", "Tavily", "SearXNG". */
  readonly name: string;
  search(request: SearchRequest, signal: AbortSignal): Promise<Outcome<SearchHit[]>>;
}

/** A provider's answer: its status, headers and body (bounded). */
export interface ProviderAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/** Enough for any result page; a provider answering more is not answering its API. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * One request to a search provider, within `timeoutMs` and the call's `signal`. Network failures
 * and timeouts become provider_failed; any HTTP answer is returned for the provider to read.
 */
export async function askProvider(
  name: string,
  url: URL,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  options: { timeoutMs: number; signal: AbortSignal; dispatcher: Dispatcher },
): Promise<Outcome<ProviderAnswer>> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await fetch(url, {
      ...init,
      redirect: "error",
      signal: AbortSignal.any([options.signal, timeout]),
      dispatcher: options.dispatcher,
    });
    const bytes = await readBounded(response, MAX_ANSWER_BYTES);
    if (bytes === undefined)
      return fail("provider_failed", `${name} answered more than ${MAX_ANSWER_BYTES} bytes`);
    return ok({ status: response.status, headers: response.headers, body: new TextDecoder().decode(bytes) });
  } catch (error) {
    if (timeout.aborted)
      return fail("provider_failed", `${name} did not answer within ${options.timeoutMs / 1000} s`);
    if (options.signal.aborted) return fail("provider_failed", "the search was cancelled");
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return fail(
      "provider_failed",
      `${name} could not be reached (${cause?.code ?? cause?.message ?? String(error)})`,
    );
  }
}

/** A response's body, or undefined when it is longer than `limit` bytes. */
async function readBounded(response: Awaited<ReturnType<typeof fetch>>, limit: number) {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return new Uint8Array();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Seconds to wait from a `Retry-After` header (seconds, or an HTTP date), or undefined without a
 * usable one.
 */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  // every HTTP-date form starts with the day's name; Date.parse alone takes "-5" or "1.5" for
  // dates in 2001, which would say "retry now"
  if (!/^[a-z]{3,9},? /i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What a provider's error answer says, read by the provider from its own error body and headers. */
export interface ProviderRefusal {
  /** Its code and words, such as "RATE_LIMITED: Request rate limit exceeded for plan.". */
  said: string;
  /** It refused the key. */
  auth: boolean;
  /** The plan's quota is used up (as opposed to a rate limit that passes in seconds). */
  quota: boolean;
  retryAfter: number | undefined;
  /** What to do about a 4xx that is none of the above, when the provider's case is known. */
  rejectedAdvice?: string;
}

/** A provider's error answer as the refusal the model reads. */
export function refusalOf<T>(name: string, status: number, refusal: ProviderRefusal): Outcome<T> {
  const { said } = refusal;
  const refused = (code: WebErrorCode, advice: string) =>
    fail<T>(code, `${name} answered ${status}${said ? `: ${said}` : ""}; ${advice}`, { status });
  if (refusal.auth)
    return refused("provider_auth", `the service's ${name} key is not accepted: the operator must fix it`);
  if (refusal.quota)
    return refused("provider_quota", "the plan's quota is used up until it resets or the plan is raised");
  if (status === 429) {
    const when = refusal.retryAfter === undefined ? "retry later" : `retry after ${refusal.retryAfter} s`;
    return fail(
      "provider_rate_limited",
      `${name} rate limited the search${said ? ` (${said})` : ""}: ${when}`,
      refusal.retryAfter === undefined ? undefined : { retry_after_seconds: refusal.retryAfter },
    );
  }
  if (status >= 400 && status < 500)
    return refused("provider_rejected", refusal.rejectedAdvice ?? "change the query or its options");
  return refused("provider_failed", "try again later");
}

/**
 * The hits of a 200 answer: its body checked against the provider's response schema, each item
 * `pick`ed out as a hit, at most `count`.
 */
export function hitsOf<A, I>(
  name: string,
  validate: Validator<A>,
  body: string,
  items: (answer: A) => I[],
  hit: (item: I) => SearchHit,
  count: number,
): Outcome<SearchHit[]> {
  const parsed = parseAnswer(name, validate, body);
  return parsed.ok ? ok(items(parsed.value).slice(0, count).map(hit)) : parsed;
}

/** A JSON body checked against a provider's response schema, or provider_failed naming the first problem. */
function parseAnswer<T>(name: string, validate: Validator<T>, body: string): Outcome<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return fail("provider_failed", `${name} answered something that is not JSON`);
  }
  const checked = check(validate, parsed);
  return checked.ok
    ? ok(checked.value)
    : fail("provider_failed", `${name} answered in an unexpected shape (${checked.problems[0]})`);
}

/** Parsed JSON, or undefined when the body is not JSON (an error page, say). */
export function jsonOrUndefined(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The query with a `site:` operator, for providers that read one. */
export const withSite = (request: SearchRequest) =>
  request.site ? `site:${request.site} ${request.query}` : request.query;
