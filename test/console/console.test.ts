import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestBrain } from "../helpers/brain.js";
import { type GatedBrain, startGatedBrain } from "../helpers/gated-tool.js";
import { needs } from "../helpers/host-needs.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { type FakeModelServer, startFakeModelServer } from "../providers/fake-model-server.js";
import { openAIStall } from "../providers/fake-openai.js";
import { artifactPath, launchChromium } from "./browser.js";

// The web console in a real Chromium against a real Brain, reached through a TCP proxy that the
// test cuts to drop the page's connection in the middle of a turn.

const HOSTILE = `<img src=x id=injected onerror="document.title='owned'">`;

let gated: GatedBrain;
let model: FakeModelServer;
let brain: TestBrain;
let proxy: TcpProxy;
let browser: Browser;
let origin: string;

describe("the web console", needs("chromium"), () => {
  beforeAll(async () => {
    model = await startFakeModelServer();
    gated = await startGatedBrain([
      {
        name: "live",
        provider: "openai",
        model: "test-model",
        base_url: `${model.url}/v1`,
        context_window: 128_000,
      },
    ]);
    brain = gated.brain;
    const port = Number(new URL(brain.url).port);
    proxy = await startTcpProxy("127.0.0.1", port);
    origin = `http://127.0.0.1:${proxy.port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await gated?.stop();
    await model?.close();
  });

  /** A tab with the key pasted in, recording every URL it asks for and everything it logs as an error. */
  async function signedIn(): Promise<{ page: Page; urls: string[]; errors: string[] }> {
    const page = await browser.newPage();
    const urls: string[] = [];
    const errors: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${origin}/console`);
    await page.fill("#key", brain.keys.acme);
    await page.click("#login button[type=submit]");
    await page.waitForSelector("#app:not([hidden])");
    return { page, urls, errors };
  }

  /** The seqs of the stored events the page shows, in page order. */
  const shownSeqs = (page: Page) =>
    page.$$eval("#events [data-seq]", (nodes) => nodes.map((node) => Number(node.getAttribute("data-seq"))));

  it("is served as static files under a strict Content-Security-Policy", async () => {
    const page = await fetch(`${origin}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const policy = page.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await page.text();
    // no inline script or style the policy would have to allow
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
    const script = await fetch(`${origin}/console/console.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).not.toMatch(/\bnew Function\(|\beval\(/);
    for (const path of ["/console/package.json", "/console/..%2Fpackage.json", "/console/__proto__"]) {
      expect((await fetch(`${origin}${path}`)).status, path).toBe(404);
    }
  });

  it("lists sessions page by page, runs a turn live across a dropped connection, and survives a reload", async () => {
    const client = brain.client();
    for (let i = 0; i < 22; i++) await client.createSession({ metadata: { n: i } });
    const { page, urls, errors } = await signedIn();

    // 20 a page, newest first, and the rest behind "More"
    await expect.poll(() => page.locator("#sessions li").count()).toBe(20);
    await page.click("#more");
    await expect.poll(() => page.locator("#sessions li").count()).toBe(22);
    await expect(page.isHidden("#more")).resolves.toBe(true);

    // a new session with a tool chosen from the catalog and a model by name
    await page.check("#tools input[value=slow]");
    await page.fill("#model", "slow-demo");
    await page.click("#create button[type=submit]");
    await page.waitForSelector("#events [data-type='session.created']");
    const sessionId = (await page.textContent("#session-id")) ?? "";
    expect(sessionId).toMatch(/^ses_/);
    await expect(page.textContent("#session-meta")).resolves.toContain("slow");

    await page.fill("#input", HOSTILE);
    await page.press("#input", "Enter");
    // the call's card: its arguments, then progress live while it runs
    const card = page.locator("#events .card.tool").first();
    await card.locator(".progress li").first().waitFor();
    await expect(card.locator(".arguments").textContent()).resolves.toContain('"task"');
    await expect(card.locator(".progress li").first().textContent()).resolves.toContain('"step": 1');
    await expect(page.textContent("#session-status")).resolves.toBe("running");

    // the connection drops mid-turn; the turn goes on and ends while the page is away
    proxy.cut();
    await page.waitForSelector("#connection[data-state=reconnecting]");
    gated.release();
    await expect.poll(async () => (await client.events(sessionId)).at(-1)?.type).toBe("turn.completed");
    proxy.restore();
    await page.waitForSelector("#connection[data-state=connected]");
    await page.waitForSelector("#events [data-type='turn.completed']");

    // every stored event once, in order: no duplicate, no gap
    const stored = await client.events(sessionId);
    expect(await shownSeqs(page)).toEqual(stored.map((event) => event.seq));
    await expect(card.locator(".result .code").textContent()).resolves.toBe("ok");
    await expect(card.locator(".result .duration").textContent()).resolves.toMatch(/\d+(\.\d)? (ms|s)$/);
    await expect(card.locator(".result .content").textContent()).resolves.toBe("slow work done");
    await expect(page.locator("#events .card.assistant").last().textContent()).resolves.toContain(
      "The tool said: slow work done",
    );
    // what the model and the person wrote is shown as text, never run as HTML
    await expect(page.locator("#events .card.user .text").textContent()).resolves.toBe(HOSTILE);
    expect(await page.locator("#injected").count()).toBe(0);
    expect(await page.title()).toBe("Brain console");
    await page.screenshot({ path: artifactPath("console-turn.png"), fullPage: true });

    // a reload keeps the key (this tab's sessionStorage) and the open session, shown once again
    await page.reload();
    await page.waitForSelector("#events [data-type='turn.completed']");
    expect(await shownSeqs(page)).toEqual(stored.map((event) => event.seq));
    expect(await page.inputValue("#key")).toBe("");

    // the key went in headers only, never in a URL, and the page broke no rule of its policy
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url).not.toContain(brain.keys.acme);
    expect(page.url()).not.toContain(brain.keys.acme);
    expect(errors.filter((text) => !/Failed to load resource|ERR_/.test(text))).toEqual([]);
    await page.close();
  });

  it("interrupts a running turn, and closes the session", async () => {
    const { page } = await signedIn();
    await page.check("#tools input[value=slow]");
    await page.fill("#model", "slow-demo");
    await page.click("#create button[type=submit]");
    await page.waitForSelector("#events [data-type='session.created']");
    await page.fill("#input", "long job");
    await page.click("#send");
    await page.locator("#events .card.tool .progress li").first().waitFor();

    await page.click("#interrupt");
    await page.waitForSelector("#events [data-type='turn.interrupted']");
    const result = page.locator("#events .card.tool .result");
    await expect(result.locator(".code").textContent()).resolves.toBe("error cancelled");
    await expect(result.locator(".unknown").count()).resolves.toBe(1);
    await expect(page.textContent("#session-status")).resolves.toBe("idle");

    await page.click("#close");
    await page.waitForSelector("#events [data-type='session.closed']");
    await expect(page.textContent("#session-status")).resolves.toBe("closed");
    await expect(page.isDisabled("#send")).resolves.toBe(true);
    await page.screenshot({ path: artifactPath("console-closed.png"), fullPage: true });
    await page.close();
  });

  it("shows a call that waits for approval with buttons that approve or deny it", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["guarded"],
      script: [
        { tool_calls: [{ name: "guarded", arguments: { n: 1 } }] },
        { tool_calls: [{ name: "guarded", arguments: { n: 2 } }] },
        { text: "both answered" },
      ],
    });
    const { page } = await signedIn();
    // the open session is the page's #ses_…: a reload opens it
    await page.goto(`${origin}/console#${session.id}`);
    await page.reload();
    await page.waitForSelector("#events [data-type='session.created']");
    await client.sendMessage(session.id, "go");

    const first = page.locator("#events .card.tool").nth(0);
    await first.locator("button.approve").click();
    await expect.poll(() => first.locator(".result .code").textContent()).toBe("ok");
    const second = page.locator("#events .card.tool").nth(1);
    await second.locator("button.deny").click();
    await page.waitForSelector("#events [data-type='turn.completed']");
    await expect(second.locator(".result .code").textContent()).resolves.toBe("error denied");
    await expect(second.locator(".unknown").count()).resolves.toBe(0);
    const events = await client.events(session.id);
    expect(events.filter((e) => e.type === "tool.approval").map((e) => e.data.decision)).toEqual([
      "approve",
      "deny",
    ]);
    await page.screenshot({ path: artifactPath("console-approval.png"), fullPage: true });
    await page.close();
  });

  it("answers a call again after an answer that never reached Brain", async () => {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["guarded"],
      script: [{ tool_calls: [{ name: "guarded", arguments: {} }] }, { text: "answered" }],
    });
    const { page } = await signedIn();
    await page.goto(`${origin}/console#${session.id}`);
    await page.reload();
    await page.waitForSelector("#events [data-type='session.created']");
    await client.sendMessage(session.id, "go");
    const approve = page.locator("#events .card.tool button.approve");
    await approve.waitFor();

    // Brain is out of reach when the person answers: the answer is lost, the call still waits
    proxy.cut();
    try {
      await approve.click();
      await page.waitForSelector("#message.error");
      await expect.poll(() => approve.isEnabled()).toBe(true);
      await expect(page.isEnabled("#events .card.tool button.deny")).resolves.toBe(true);
    } finally {
      // the tests after this one reach Brain through the same proxy
      proxy.restore();
    }
    const waiting = await client.events(session.id);
    expect(waiting.filter((event) => event.type === "tool.approval")).toEqual([]);
    await approve.click();
    await page.waitForSelector("#events [data-type='turn.completed']");
    await expect(page.locator("#events .card.tool .result .code").textContent()).resolves.toBe("ok");
    await expect(page.textContent("#message")).resolves.toBe("");
    await page.close();
  });

  it("forgets the key and everything the key showed, so another key starts clean", async () => {
    const { page } = await signedIn();
    // the key, once it works, is in the tab's storage only, not in a form anyone can submit or read
    expect(await page.inputValue("#key")).toBe("");
    await page.click("#create button[type=submit]");
    await page.waitForSelector("#events [data-type='session.created']");
    const acmeSession = (await page.textContent("#session-id")) ?? "";

    await page.click("#forget");
    await page.waitForSelector("#login:not([hidden])");
    expect(await page.inputValue("#key")).toBe("");
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    // hidden itself, not only inside the hidden app
    expect(await page.getAttribute("#session", "hidden")).not.toBeNull();
    await expect(page.locator("#events > *").count()).resolves.toBe(0);
    await expect(page.textContent("#session-id")).resolves.toBe("");

    // another tenant's key: its own sessions, and no session of the first one open to act on
    await page.fill("#key", brain.keys.globex);
    await page.click("#login button[type=submit]");
    await page.waitForSelector("#app:not([hidden])");
    await expect(page.isHidden("#session")).resolves.toBe(true);
    const listed = await page.$$eval("#sessions [data-id]", (nodes) =>
      nodes.map((node) => node.getAttribute("data-id")),
    );
    expect(listed).not.toContain(acmeSession);
    expect(await page.textContent("#session-id")).toBe("");
    await page.close();
  });

  it("shows a model's text live as it writes, and keeps it, marked, when the turn is interrupted", async () => {
    model.enqueue(openAIStall("Thinking about <b>it</b>"));
    const { page } = await signedIn();
    await page.fill("#model", "live");
    await page.click("#create button[type=submit]");
    await page.waitForSelector("#events [data-type='session.created']");
    await page.fill("#input", "write slowly");
    await page.click("#send");
    const live = page.locator("#events .card.assistant.live");
    await expect.poll(() => live.locator(".text").textContent()).toBe("Thinking about <b>it</b>");
    await expect(live.locator("h3").textContent()).resolves.toBe("Assistant (writing…)");
    await page.click("#interrupt");
    await page.waitForSelector("#events [data-type='turn.interrupted']");
    await expect(live.locator("h3").textContent()).resolves.toBe(
      "Assistant (cut short: this text was not stored)",
    );
    await expect(live.locator(".text").textContent()).resolves.toBe("Thinking about <b>it</b>");
    expect(await page.locator("#events b").count()).toBe(0);
    await page.close();
  });

  it("forgets a key that stops working, and says why a bad key is refused", async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/console`);
    await page.fill("#key", "not-a-key");
    await page.click("#login button[type=submit]");
    await expect.poll(() => page.textContent("#message")).toContain("unauthorized");
    await expect(page.isHidden("#app")).resolves.toBe(true);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.close();
  });
});
