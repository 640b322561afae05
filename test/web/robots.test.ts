import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageServer, type Route, send, startPageServer, startSite } from "./page-server.js";
import { errorCode, startWeb, type TestWeb } from "./web-service.js";

const ROBOTS_MAX_BYTES = 512 * 1024;
const text =
  (body: string): Route =>
  (_req, res) =>
    send(res, 200, "text/plain", body);
const redirect =
  (to: string): Route =>
  (_req, res) => {
    res.writeHead(301, { location: to });
    res.end();
  };

let pages: PageServer;
let polite: TestWeb;
const sites: PageServer[] = [];

/** A site the service has not seen, so its robots.txt is read afresh. */
async function site(routes: Record<string, Route>) {
  const started = await startSite(routes);
  sites.push(started);
  return started;
}

beforeAll(async () => {
  pages = await startPageServer();
  polite = await startWeb({ hosts: { allow: ["127.0.0.1"] }, fetch: { respect_robots_txt: true } });
});
afterAll(async () => {
  await polite?.close();
  await Promise.all([pages, ...sites].map((server) => server?.close()));
});

describe("robots.txt", () => {
  it("refuses what robots.txt disallows, for everyone or for this User-Agent, reading it once per site", async () => {
    const everyone = await polite.call("web_fetch", { url: `${pages.origin}/private/page.html` });
    expect(errorCode(everyone)).toBe("robots_disallowed");
    const agents = await polite.call("web_fetch", { url: `${pages.origin}/no-agents/page.html` });
    expect(errorCode(agents)).toBe("robots_disallowed");
    const allowed = await polite.call("web_fetch", { url: `${pages.origin}/notes.txt?robots` });
    expect(allowed.is_error).toBe(false);
    expect(pages.requests).not.toContain("/private/page.html");
    const robotsReads = pages.requests.filter((path) => path === "/robots.txt").length;
    expect(robotsReads).toBe(1);
  });

  it("matches the configured User-Agent against robots.txt's groups", async () => {
    const other = await startWeb({
      hosts: { allow: ["127.0.0.1"] },
      fetch: { respect_robots_txt: true, user_agent: "OtherBot/2.0" },
    });
    try {
      const forPeople = await other.call("web_fetch", { url: `${pages.origin}/no-agents/page.html` });
      expect(forPeople).toMatchObject({ is_error: false });
      expect(forPeople.text).toContain("for people");
      const everyone = await other.call("web_fetch", { url: `${pages.origin}/private/page.html` });
      expect(errorCode(everyone)).toBe("robots_disallowed");
    } finally {
      await other.close();
    }
  });

  it("takes a robots.txt answering 5xx to close the whole site, as RFC 9309 says", async () => {
    const down = await site({
      "/robots.txt": (_req, res) => send(res, 503, "text/plain", "down"),
      "/page.txt": text("ok"),
    });
    const answer = await polite.call("web_fetch", { url: `${down.origin}/page.txt` });
    expect(errorCode(answer)).toBe("robots_disallowed");
    expect(down.requests).toEqual(["/robots.txt"]);
  });

  it("obeys the first 512 KiB of a larger robots.txt, up to its last whole line, as RFC 9309 asks", async () => {
    // the limit falls inside the line "Disallow: /late": read as far as the limit, it would be
    // "Disallow: /", closing the whole site
    const head = "User-agent: *\nDisallow: /private\n";
    const padding = `#${" ".repeat(ROBOTS_MAX_BYTES - head.length - "Disallow: /".length - 2)}\n`;
    const robots = `${head}${padding}Disallow: /late\n${"# more\n".repeat(20_000)}`;
    expect(robots.indexOf("Disallow: /late")).toBe(ROBOTS_MAX_BYTES - "Disallow: /".length);
    expect(robots.length).toBeGreaterThan(600 * 1024);
    const large = await site({
      "/robots.txt": text(robots),
      "/private/x": text("private"),
      "/late/x": text("past the limit"),
    });
    const refused = await polite.call("web_fetch", { url: `${large.origin}/private/x` });
    expect(errorCode(refused)).toBe("robots_disallowed");
    const late = await polite.call("web_fetch", { url: `${large.origin}/late/x` });
    expect(late).toMatchObject({ is_error: false, structured: { status: 200 } });
    expect(large.requests).toEqual(["/robots.txt", "/late/x"]);
  });

  it("cuts a larger robots.txt whose lines end in CR alone at a line end too", async () => {
    const robots = `User-agent: *\rDisallow: /private\r${"# more\r".repeat(100_000)}`;
    expect(robots.length).toBeGreaterThan(600 * 1024);
    const large = await site({ "/robots.txt": text(robots), "/private/x": text("private") });
    const refused = await polite.call("web_fetch", { url: `${large.origin}/private/x` });
    expect(errorCode(refused)).toBe("robots_disallowed");
    expect(large.requests).toEqual(["/robots.txt"]);
  });
});

describe("a robots.txt that redirects", () => {
  let strict: TestWeb;
  beforeAll(async () => {
    // 127.0.0.1 may be reached, but not by the name localhost, though it resolves there
    strict = await startWeb({
      hosts: { allow: ["127.0.0.1"], deny: ["localhost"] },
      fetch: { respect_robots_txt: true },
    });
  });
  afterAll(() => strict?.close());

  it("is followed for five hops, its rules applied to the site first asked", async () => {
    const moved = await site({
      "/robots.txt": redirect("/hop?n=1"),
      "/hop": (_req, res, url) => {
        const n = Number(url.searchParams.get("n"));
        res.writeHead(302, { location: n < 4 ? `/hop?n=${n + 1}` : "/rules.txt" }).end();
      },
      "/rules.txt": text("User-agent: *\nDisallow: /private\n"),
      "/page.txt": text("ok"),
    });
    const refused = await strict.call("web_fetch", { url: `${moved.origin}/private/x` });
    expect(errorCode(refused)).toBe("robots_disallowed");
    const allowed = await strict.call("web_fetch", { url: `${moved.origin}/page.txt` });
    expect(allowed.is_error).toBe(false);
    expect(moved.requests.filter((path) => path.startsWith("/hop"))).toHaveLength(4);
    expect(moved.requests).toContain("/rules.txt");
  });

  it.each([
    ["a name on hosts.deny", (port: number) => `http://localhost:${port}/closed.txt`],
    ["a URL with a user name and password", (port: number) => `http://user:pw@127.0.0.1:${port}/closed.txt`],
    ["an address the service refuses", (port: number) => `http://127.0.0.2:${port}/closed.txt`],
    ["a file URL", () => "file:///closed.txt"],
  ])(
    "to %s is not followed, and the site is open as with no robots.txt (RFC 9309's unavailable)",
    async (_what, target) => {
      // had the redirect been followed, this robots.txt would close the site
      const elsewhere = await site({ "/closed.txt": text("User-agent: *\nDisallow: /\n") });
      const asked = await site({ "/robots.txt": redirect(target(elsewhere.port)), "/page.txt": text("ok") });
      const answer = await strict.call("web_fetch", { url: `${asked.origin}/page.txt` });
      expect(answer).toMatchObject({ is_error: false, structured: { status: 200 } });
      expect(asked.requests).toEqual(["/robots.txt", "/page.txt"]);
      expect(elsewhere.requests).toEqual([]);
    },
  );

  it("more than five times is taken as no robots.txt, as RFC 9309 allows", async () => {
    const endless = await site({
      "/robots.txt": redirect("/hop?n=1"),
      "/hop": (_req, res, url) => {
        res.writeHead(302, { location: `/hop?n=${Number(url.searchParams.get("n")) + 1}` }).end();
      },
      "/page.txt": text("ok"),
    });
    const answer = await strict.call("web_fetch", { url: `${endless.origin}/page.txt` });
    expect(answer.is_error).toBe(false);
    expect(endless.requests).toEqual([
      "/robots.txt",
      ...[1, 2, 3, 4, 5].map((n) => `/hop?n=${n}`),
      "/page.txt",
    ]);
  });
});
