import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageServer, startPageServer } from "./page-server.js";
import { errorCode, startWeb, type TestWeb } from "./web-service.js";

let pages: PageServer;
let web: TestWeb;

beforeAll(async () => {
  pages = await startPageServer();
  // the allow list lets this service reach the loopback page server; nothing else does
  web = await startWeb({ hosts: { allow: ["127.0.0.1"] }, cache: { ttl_seconds: 60 } });
});
afterAll(async () => {
  await web?.close();
  await pages?.close();
});

describe("web_fetch reads a page", () => {
  it("returns an article's readable part as markdown, links made absolute, without navigation, scripts or styles", async () => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}/article.html` });
    expect(answer.is_error).toBe(false);
    expect(answer.structured).toMatchObject({
      url: `${pages.origin}/article.html`,
      final_url: `${pages.origin}/article.html`,
      status: 200,
      content_type: "text/html",
      format: "markdown",
      truncated: false,
      redirects: 0,
      cached: false,
    });
    expect(answer.structured.title).toMatch(/Tide tables|Why the tides are late/);
    expect(answer.text).toContain(`URL: ${pages.origin}/article.html`);
    expect(answer.text).toContain("the **spring tides** arrive forty minutes later");
    expect(answer.text).toContain(`[full tables for 2026](${pages.origin}/tables/2026.html)`);
    expect(answer.text).toMatch(/## What changes\n\n- +High water: about 40 minutes later/);
    expect(answer.text).not.toMatch(/tracking|color: red|Sport|Privacy/);
  });

  it("returns plain text with one line per paragraph when asked for text", async () => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}/article.html`, format: "text" });
    expect(answer.structured.format).toBe("text");
    expect(answer.text).toMatch(/\nWhat changes\n/);
    expect(answer.text).toMatch(/\nHigh water: about 40 minutes later\n/);
    expect(answer.text).not.toMatch(/\*\*|##|\]\(/);
  });

  it("decompresses gzip, and decodes a charset the page declares only in its <meta>", async () => {
    const gzip = await web.call("web_fetch", { url: `${pages.origin}/article-gzip.html` });
    expect(gzip.text).toContain("the **spring tides** arrive");
    const latin1 = await web.call("web_fetch", { url: `${pages.origin}/latin1.html`, format: "text" });
    expect(latin1.text).toContain("Crème brûlée");
  });

  it("returns text as it is, JSON pretty-printed, and a PDF's text with its title", async () => {
    const text = await web.call("web_fetch", { url: `${pages.origin}/notes.txt` });
    expect(text.text).toBe(`URL: ${pages.origin}/notes.txt\n\nline one\nline two\n`);
    const json = await web.call("web_fetch", { url: `${pages.origin}/data.json` });
    expect(json.structured.content_type).toBe("application/json");
    expect(json.text).toContain('{\n  "tide": {\n    "high": "06:40",');
    const pdf = await web.call("web_fetch", { url: `${pages.origin}/doc.pdf` });
    expect(pdf).toMatchObject({
      is_error: false,
      structured: { title: "Harbour survey", content_type: "application/pdf" },
    });
    expect(pdf.text).toBe(`# Harbour survey\nURL: ${pages.origin}/doc.pdf\n\nSoundings of the channel`);
  });

  it("follows a redirect to the final URL", async () => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}/redirect?to=/notes.txt&status=301` });
    expect(answer.structured).toMatchObject({ final_url: `${pages.origin}/notes.txt`, redirects: 1 });
  });

  it("sends its User-Agent", async () => {
    await web.call("web_fetch", { url: `${pages.origin}/notes.txt?ua` });
    expect(pages.userAgents[pages.requests.indexOf("/notes.txt?ua")]).toBe(
      "BrainWeb/0.1 (an AI agent's web fetch tool)",
    );
  });

  it("serves a page again from the tenant's cache, saying so, without asking the site", async () => {
    const url = `${pages.origin}/notes.txt?cache-test`;
    await web.call("web_fetch", { url });
    const again = await web.call("web_fetch", { url });
    expect(again.structured.cached).toBe(true);
    expect(again.text).toMatch(/^\(from the cache: fetched /);
    expect(pages.requests.filter((path) => path === "/notes.txt?cache-test")).toHaveLength(1);
  });
});

describe("web_fetch's refusals and limits", () => {
  it.each([
    ["/image.png", "unsupported_content_type", "image/png; only text, HTML, JSON and PDF are read"],
    ["/missing", "http_error", "answered 404 Not Found"],
    ["/broken.pdf", "unreadable", "the PDF could not be read"],
    ["/loop", "too_many_redirects", "more than 5 redirects"],
  ])("%s is refused as %s", async (path, code, text) => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}${path}` });
    expect(errorCode(answer)).toBe(code);
    expect(answer.text).toContain(text);
  });

  it("cuts a page at max_bytes and says so, but refuses a PDF it cannot read whole", async () => {
    const cut = await web.call("web_fetch", {
      url: `${pages.origin}/big.html`,
      max_bytes: 100_000,
      format: "text",
    });
    expect(cut.structured).toMatchObject({ truncated: true });
    expect(cut.text).toMatch(/\[cut: the download stopped at 100000 bytes\]$/);
    const pdf = await web.call("web_fetch", { url: `${pages.origin}/big.pdf`, max_bytes: 100_000 });
    expect(pdf.structured).toMatchObject({ error: { code: "too_large" }, max_bytes: 100_000 });
    const over = await web.call("web_fetch", { url: `${pages.origin}/big.html`, max_bytes: 10_000_000 });
    expect(over.is_error).toBe(true);
    expect(over.text).toMatch(/max_bytes/);
  });

  it("cuts content at max_chars, and reports download progress on a large page", async () => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}/big.html`, format: "text" });
    expect(answer.structured).toMatchObject({ truncated: true, chars: 100_000 });
    expect(answer.text).toMatch(/\[cut: the content stopped at 100000 characters\]$/);
    const downloading = answer.progress as { stage: string; bytes: number }[];
    expect(downloading.length).toBeGreaterThanOrEqual(10);
    expect(downloading[0]).toMatchObject({ stage: "downloading", url: `${pages.origin}/big.html` });
    expect(downloading.map((update) => update.bytes)).toEqual(
      [...downloading.map((update) => update.bytes)].sort((a, b) => a - b),
    );
  });

  it("says it is still waiting while a slow page arrives", async () => {
    const answer = await web.call("web_fetch", { url: `${pages.origin}/slow.html`, format: "text" });
    expect(answer.text).toContain("Paragraph 5 of a page that arrives slowly.");
    expect(answer.progress).toContainEqual({ stage: "waiting", url: `${pages.origin}/slow.html` });
  });

  it("gives up at the time limit, closing the connection", async () => {
    const quick = await startWeb({ hosts: { allow: ["127.0.0.1"] }, fetch: { timeout_seconds: 0.5 } });
    try {
      const answer = await quick.call("web_fetch", { url: `${pages.origin}/hang?timeout` });
      expect(errorCode(answer)).toBe("timeout");
      await expect
        .poll(() => pages.abandoned.filter((path) => path === "/hang").length)
        .toBeGreaterThanOrEqual(1);
    } finally {
      await quick.close();
    }
  });

  it("stops fetching when Brain hangs up", async () => {
    const before = pages.abandoned.length;
    const hangUp = new AbortController();
    const call = web.call("web_fetch", { url: `${pages.origin}/hang?cancel` }, {}, hangUp.signal);
    await expect.poll(() => pages.requests.includes("/hang?cancel")).toBe(true);
    hangUp.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => pages.abandoned.slice(before)).toContain("/hang");
  });
});
