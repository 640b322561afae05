import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageServer, startPageServer } from "./page-server.js";
import { errorCode, startWeb, type TestWeb } from "./web-service.js";

// A real page server listens on 127.0.0.1: were any of these refusals missing, the fetch would
// reach it and succeed, and its request log would show it.
let pages: PageServer;
let web: TestWeb;

beforeAll(async () => {
  pages = await startPageServer();
  web = await startWeb(); // no allow list: loopback is out of reach
});
afterAll(async () => {
  await web?.close();
  await pages?.close();
});

describe("web_fetch refuses every address it must not reach", () => {
  const port = () => pages.port;
  it.each([
    ["loopback", () => `http://127.0.0.1:${port()}/notes.txt`],
    ["a DNS name resolving to 127.0.0.1", () => `http://localhost:${port()}/notes.txt`],
    ["loopback as one decimal number", () => `http://2130706433:${port()}/notes.txt`],
    ["loopback in hex", () => `http://0x7f000001:${port()}/notes.txt`],
    ["loopback in dotted hex", () => `http://0x7f.0x0.0x0.0x1:${port()}/notes.txt`],
    ["loopback in octal", () => `http://0177.0.0.1:${port()}/notes.txt`],
    ["loopback shortened", () => `http://127.1:${port()}/notes.txt`],
    ["the rest of 127/8", () => `http://127.42.0.7:${port()}/notes.txt`],
    ["0.0.0.0 (this host)", () => `http://0.0.0.0:${port()}/notes.txt`],
    ["IPv6 loopback", () => `http://[::1]:${port()}/notes.txt`],
    ["IPv4-mapped IPv6 loopback", () => `http://[::ffff:127.0.0.1]:${port()}/notes.txt`],
    ["IPv4-mapped IPv6 loopback in hex", () => `http://[::ffff:7f00:1]:${port()}/notes.txt`],
    ["NAT64 of loopback", () => `http://[64:ff9b::7f00:1]:${port()}/notes.txt`],
    ["6to4 of loopback", () => `http://[2002:7f00:1::]:${port()}/notes.txt`],
    ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/"],
    ["the metadata address as a decimal", () => "http://2852039166/latest/meta-data/"],
    ["AWS's IPv6 metadata address", () => "http://[fd00:ec2::254]/latest/meta-data/"],
    ["Alibaba's metadata address (shared space)", () => "http://100.100.100.200/latest/meta-data/"],
    ["10/8", () => "http://10.0.0.1/"],
    ["172.16/12", () => "http://172.16.5.4/"],
    ["192.168/16", () => "http://192.168.1.1/"],
    ["IPv4 link-local", () => "http://169.254.1.1/"],
    ["IPv6 link-local", () => "http://[fe80::1]/"],
    ["IPv6 unique local", () => "http://[fc00::1]/"],
    ["IPv4 multicast", () => "http://224.0.0.1/"],
    ["IPv6 multicast", () => "http://[ff02::1]/"],
    ["broadcast", () => "http://255.255.255.255/"],
  ])("%s", async (_what, url) => {
    const before = pages.requests.length;
    const answer = await web.call("web_fetch", { url: url() });
    expect(answer.is_error).toBe(true);
    expect(errorCode(answer)).toBe("address_refused");
    expect(answer.text).toMatch(/: refused: the service fetches public addresses only$/);
    expect(pages.requests.length).toBe(before);
  });

  it.each([
    ["file:///etc/passwd", "invalid_url", "file URLs are not fetched: only http and https"],
    ["ftp://example.com/file", "invalid_url", "ftp URLs are not fetched"],
    ["gopher://127.0.0.1:70/", "invalid_url", "gopher URLs are not fetched"],
    ["data:text/html,<p>hi</p>", "invalid_url", "data URLs are not fetched"],
    ["javascript:alert(1)", "invalid_url", "javascript URLs are not fetched"],
    ["/relative/path", "invalid_url", "is not an absolute URL"],
    [
      "http://user:hunter2@example.com/",
      "credentials_refused",
      "a URL with a user name or password is refused",
    ],
  ])("%s is refused as %s", async (url, code, text) => {
    const answer = await web.call("web_fetch", { url });
    expect(errorCode(answer)).toBe(code);
    expect(answer.text).toContain(text);
    expect(answer.text).not.toContain("hunter2");
  });
});

describe("redirects are checked at every hop", () => {
  let trusting: TestWeb;
  beforeAll(async () => {
    // may reach the address 127.0.0.1 (by any name): a redirect elsewhere is a new hop, checked anew
    trusting = await startWeb({ hosts: { allow: ["127.0.0.1"] } });
  });
  afterAll(() => trusting?.close());

  it.each([
    ["another loopback address", () => `http://127.0.0.2:${pages.port}/notes.txt`, "address_refused"],
    ["IPv6 loopback", () => `http://[::1]:${pages.port}/notes.txt`, "address_refused"],
    ["the metadata address", () => "http://169.254.169.254/latest/meta-data/", "address_refused"],
    ["a private address", () => "http://10.1.2.3/admin", "address_refused"],
    ["a file URL", () => "file:///etc/passwd", "invalid_url"],
    ["something that is not a URL", () => "http://[::1", "invalid_url"],
    ["a URL with credentials", () => "http://admin:secret@example.com/", "credentials_refused"],
  ])("a redirect to %s is refused", async (_what, target, code) => {
    const before = pages.requests.length;
    const answer = await trusting.call("web_fetch", {
      url: `${pages.origin}/redirect?to=${encodeURIComponent(target())}`,
    });
    expect(errorCode(answer)).toBe(code);
    expect(pages.requests.slice(before)).toEqual([`/redirect?to=${encodeURIComponent(target())}`]);
  });
});

describe("the config's host lists", () => {
  it("a denied name is refused before it is resolved, and a denied range wins over an allowed name", async () => {
    const strict = await startWeb({
      hosts: { allow: ["localhost"], deny: ["*.corp.example", "127.0.0.0/8"] },
    });
    try {
      const name = await strict.call("web_fetch", { url: "https://wiki.corp.example/" });
      expect(name.structured).toMatchObject({ error: { code: "host_denied" } });
      expect(name.text).toBe("wiki.corp.example is on the service's deny list");
      const range = await strict.call("web_fetch", { url: `http://localhost:${pages.port}/notes.txt` });
      expect(errorCode(range)).toBe("address_refused");
      expect(range.text).toContain("in a range the service's config denies");
    } finally {
      await strict.close();
    }
  });

  it("an allowed range lets a fetch reach a private address, by name or by number", async () => {
    const lab = await startWeb({ hosts: { allow: ["127.0.0.0/8"] } });
    try {
      for (const host of ["localhost", "127.0.0.1"]) {
        const answer = await lab.call("web_fetch", { url: `http://${host}:${pages.port}/notes.txt` });
        expect(answer).toMatchObject({ is_error: false, structured: { status: 200 } });
      }
    } finally {
      await lab.close();
    }
  });
});
