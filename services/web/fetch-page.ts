import { type Agent, fetch } from "undici";
import type { HostList } from "./address-policy.js";
import type { FetchLimits } from "./config.js";
import { fail, type Outcome, ok } from "./errors.js";
import { AddressRefused } from "./guarded-agent.js";
import { type RobotsAnswer, RobotsRules } from "./robots.js";
import { checkUrl } from "./url-policy.js";

/** The kinds of content a fetch reads; anything else is refused before its body is downloaded. */
export type ContentKind = "html" | "text" | "json" | "pdf";

export interface FetchedPage {
  /** Where the last hop answered from, after redirects. */
  url: string;
  status: number;
  kind: ContentKind;
  /** The media type as the site sent it, without parameters. */
  mediaType: string;
  charset: string | undefined;
  body: Uint8Array;
  /** The body went past the byte limit and was cut there. */
  truncated: boolean;
  redirects: number;
}

/** What a fetch reports while it works: each hop, and the bytes downloaded so far. */
export type FetchProgress =
  | { stage: "redirected"; url: string }
  | { stage: "downloading"; url: string; bytes: number };

const ROBOTS_MAX_BYTES = 512 * 1024; // RFC 9309 asks crawlers to read at least 500 KiB
const ROBOTS_MAX_REDIRECTS = 5; // RFC 9309 asks crawlers to follow at least five
const PROGRESS_EVERY_BYTES = 256 * 1024;

export function contentKind(mediaType: string): ContentKind | undefined {
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html";
  if (mediaType === "application/pdf") return "pdf";
  if (mediaType === "application/json" || mediaType.endsWith("+json")) return "json";
  if (mediaType.startsWith("text/")) return "text";
  return undefined;
}

function parseContentType(header: string | null): { mediaType: string; charset: string | undefined } {
  const [type = "", ...parameters] = (header ?? "").split(";");
  const charset = parameters
    .map((parameter) => parameter.trim().match(/^charset="?([^";]+)"?$/i)?.[1])
    .find((value) => value !== undefined);
  return { mediaType: type.trim().toLowerCase(), charset };
}

/**
 * Fetches pages through the guarded Agent: each hop's URL is checked (checkUrl), its address is
 * checked as it connects (guardedAgent), robots.txt is asked when the config says so, and the
 * body is read up to the byte limit, all within the time limit and the caller's signal.
 */
export class PageFetcher {
  private readonly robots: RobotsRules | undefined;

  constructor(
    private readonly agent: Agent,
    private readonly deny: HostList,
    private readonly limits: FetchLimits,
  ) {
    this.robots = limits.respectRobotsTxt
      ? new RobotsRules((url, signal) => this.readRobots(url, signal), limits.userAgent)
      : undefined;
  }

  async fetch(
    raw: string,
    options: { maxBytes: number; signal: AbortSignal; progress: (update: FetchProgress) => void },
  ): Promise<Outcome<FetchedPage>> {
    const timeout = AbortSignal.timeout(this.limits.timeoutMs);
    const signal = AbortSignal.any([options.signal, timeout]);
    try {
      return await this.follow(raw, options.maxBytes, signal, options.progress);
    } catch (error) {
      if (timeout.aborted)
        return fail("timeout", `the page did not arrive within ${this.limits.timeoutMs / 1000} s`);
      if (options.signal.aborted) throw error; // the caller went away: nobody reads a result
      return failureOf(error);
    }
  }

  private async follow(
    raw: string,
    maxBytes: number,
    signal: AbortSignal,
    progress: (update: FetchProgress) => void,
  ): Promise<Outcome<FetchedPage>> {
    let next = raw;
    for (let redirects = 0; ; redirects++) {
      const checked = checkUrl(next, this.deny);
      if (!checked.ok) return checked;
      const url = checked.value;
      if (this.robots && !(await this.robots.allows(url, signal))) {
        return fail("robots_disallowed", `${url.origin}/robots.txt does not allow fetching ${url.pathname}`);
      }
      const response = await fetch(url, {
        headers: {
          "user-agent": this.limits.userAgent,
          accept: "text/html,application/xhtml+xml,application/json,application/pdf,text/*;q=0.9",
        },
        redirect: "manual",
        signal,
        dispatcher: this.agent,
      });
      const location = redirectLocation(response);
      if (location !== null) {
        await response.body?.cancel();
        if (redirects >= this.limits.maxRedirects) {
          return fail(
            "too_many_redirects",
            `more than ${this.limits.maxRedirects} redirects; the last went to ${location.slice(0, 300)}`,
          );
        }
        if (!URL.canParse(location, url.href)) {
          return fail(
            "invalid_url",
            `${url.href} redirected to "${location.slice(0, 300)}", which is not a URL`,
          );
        }
        next = new URL(location, url).href;
        progress({ stage: "redirected", url: next });
        continue;
      }
      if (response.status < 200 || response.status > 299) {
        await response.body?.cancel();
        return fail("http_error", `${url.href} answered ${response.status} ${response.statusText}`.trim(), {
          status: response.status,
          url: url.href,
        });
      }
      const { mediaType, charset } = parseContentType(response.headers.get("content-type"));
      const kind = contentKind(mediaType);
      if (!kind) {
        await response.body?.cancel();
        return fail(
          "unsupported_content_type",
          `${url.href} is ${mediaType || "of no stated type"}; only text, HTML, JSON and PDF are read`,
          { content_type: mediaType },
        );
      }
      const body = await readCapped(response, maxBytes, (bytes) =>
        progress({ stage: "downloading", url: url.href, bytes }),
      );
      if (body.truncated && kind === "pdf") {
        return fail(
          "too_large",
          `the PDF is larger than ${maxBytes} bytes, and part of a PDF cannot be read`,
          {
            max_bytes: maxBytes,
          },
        );
      }
      return ok({ url: url.href, status: response.status, kind, mediaType, charset, ...body, redirects });
    }
  }

  /**
   * robots.txt through the same Agent, so it is address-checked too. A failure to connect is
   * thrown, not read as "no robots.txt": the page itself is then reported as unreachable, refused
   * or unknown, which says more than a robots refusal would. Redirects are followed here, not by
   * undici, so that each hop's URL is checked as a page's hops are.
   */
  private async readRobots(robotsUrl: URL, signal: AbortSignal): Promise<RobotsAnswer> {
    let next = robotsUrl.href;
    for (let redirects = 0; ; redirects++) {
      const checked = checkUrl(next, this.deny);
      // A hop this service refuses (a denied name, credentials, not http) ends the chain unread,
      // which RFC 9309, section 2.3.1.2, lets a crawler take as "unavailable", like a 4xx: the site did
      // answer, so it is not the server or network error that would close the whole site.
      if (!checked.ok) return "unavailable";
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(checked.value, {
          headers: { "user-agent": this.limits.userAgent },
          redirect: "manual",
          signal,
          dispatcher: this.agent,
        });
      } catch (error) {
        // a refused address after a redirect is the same refusal; at the first hop it is the
        // page's own host, and is reported as the page's
        if (redirects > 0 && refusedAddress(error)) return "unavailable";
        throw error;
      }
      const location = redirectLocation(response);
      if (location !== null) {
        await response.body?.cancel();
        if (redirects >= ROBOTS_MAX_REDIRECTS || !URL.canParse(location, checked.value.href)) {
          return "unavailable";
        }
        next = new URL(location, checked.value).href;
        continue;
      }
      const { body, truncated } = await readCapped(response, ROBOTS_MAX_BYTES, () => {});
      return { status: response.status, text: new TextDecoder().decode(wholeLines(body, truncated)) };
    }
  }
}

/** Where a 3xx answer points, or null when the answer is not a redirect to be followed. */
function redirectLocation(response: Awaited<ReturnType<typeof fetch>>): string | null {
  return response.status >= 300 && response.status < 400 ? response.headers.get("location") : null;
}

/** A cut robots.txt up to its last line break, so a rule cut in two is not read as a shorter one. */
function wholeLines(body: Uint8Array, truncated: boolean): Uint8Array {
  if (!truncated) return body;
  // lines may end in CR alone; a cut with no line end in it at all is one line, kept as it is
  // rather than read as no rules, which would allow everything
  const end = Math.max(body.lastIndexOf(0x0a), body.lastIndexOf(0x0d));
  return end < 0 ? body : body.subarray(0, end + 1);
}

/** The body up to `maxBytes` (cut there, never refused), reporting progress every 256 KiB. */
async function readCapped(
  response: Awaited<ReturnType<typeof fetch>>,
  maxBytes: number,
  report: (bytes: number) => void,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let reported = 0;
  if (!response.body) return { body: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks), truncated: false };
    if (total + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      await reader.cancel();
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(value);
    total += value.byteLength;
    if (total - reported >= PROGRESS_EVERY_BYTES) {
      reported = total;
      report(total);
    }
  }
}

/** The guarded Agent's refusal, when that is what a fetch failed with (undici wraps it). */
function refusedAddress(error: unknown): AddressRefused | undefined {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    if (cause instanceof AddressRefused) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A failed fetch as the model reads it: refused address, no such host, no connection. */
function failureOf(error: unknown): Outcome<never> {
  const refused = refusedAddress(error);
  if (refused) {
    return fail("address_refused", `${refused.message}: the service fetches public addresses only`, {
      host: refused.host,
    });
  }
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA") {
      return fail("dns_failed", `the host name does not resolve (${code})`);
    }
    if (typeof code === "string" && code !== "ERR_INVALID_URL" && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code)) {
      return fail("connect_failed", `the connection failed (${code})`);
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return fail(
    "connect_failed",
    `the fetch failed (${error instanceof Error ? error.message : String(error)})`,
  );
}
