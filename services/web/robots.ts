import robotsParserModule from "robots-parser";

interface Robots {
  isAllowed(url: string, userAgent?: string): boolean | undefined;
}
// a CommonJS function whose types declare it an ES default export
const robotsParser = robotsParserModule as unknown as (url: string, text: string) => Robots;

/**
 * What a robots.txt fetch came back with: a status and the text, or "unavailable" when it was not
 * read to the end of its redirects (RFC 9309, section 2.3.1.2, lets a crawler take that as a 4xx).
 */
export type RobotsAnswer = { status: number; text: string } | "unavailable";

type Verdict = { kind: "rules"; rules: Robots } | { kind: "allow" } | { kind: "disallow" };

/**
 * As RFC 9309 says: 2xx has rules, 4xx or unavailable means none, 5xx means the whole site is off
 * limits (as does no answer at all, which the reader throws, so nothing is fetched from the site
 * either).
 */
function verdictOf(robotsUrl: string, answer: RobotsAnswer): Verdict {
  if (answer === "unavailable") return { kind: "allow" };
  if (answer.status >= 500) return { kind: "disallow" };
  if (answer.status >= 400) return { kind: "allow" };
  return { kind: "rules", rules: robotsParser(robotsUrl, answer.text) };
}

/** Each site's robots.txt, read once per `ttlMs` and kept for at most `maxSites` sites. */
export class RobotsRules {
  private readonly sites = new Map<string, { verdict: Verdict; at: number }>();

  constructor(
    private readonly read: (robotsUrl: URL, signal: AbortSignal) => Promise<RobotsAnswer>,
    private readonly userAgent: string,
    private readonly ttlMs = 600_000,
    private readonly maxSites = 1000,
  ) {}

  /** Whether robots.txt lets this service's User-Agent fetch `url`. */
  async allows(url: URL, signal: AbortSignal): Promise<boolean> {
    const robotsUrl = new URL("/robots.txt", url.origin);
    let site = this.sites.get(url.origin);
    if (!site || Date.now() - site.at >= this.ttlMs) {
      site = { verdict: verdictOf(robotsUrl.href, await this.read(robotsUrl, signal)), at: Date.now() };
      this.sites.delete(url.origin);
      this.sites.set(url.origin, site);
      if (this.sites.size > this.maxSites) this.sites.delete(this.sites.keys().next().value as string);
    }
    const { verdict } = site;
    if (verdict.kind !== "rules") return verdict.kind === "allow";
    return verdict.rules.isAllowed(url.href, this.userAgent) !== false;
  }
}
