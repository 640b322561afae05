import { afterAll, beforeAll, it } from "vitest";
import { expectConformance } from "../helpers/conformance.js";
import { type FakeProvider, startFakeSearxng } from "./fake-search-apis.js";
import { type PageServer, startPageServer } from "./page-server.js";
import { startWeb, type TestWeb } from "./web-service.js";

let pages: PageServer;
let searxng: FakeProvider;
let web: TestWeb;

beforeAll(async () => {
  pages = await startPageServer();
  searxng = await startFakeSearxng({ jsonEnabled: true });
  web = await startWeb({
    search: { provider: "searxng", url: searxng.url.replace(/\/search$/, "") },
    hosts: { allow: ["127.0.0.1"] },
  });
});
afterAll(async () => {
  await web?.close();
  await searxng?.close();
  await pages?.close();
});

it("web_search passes every rule of brain tools check, with its output schema", async () => {
  await expectConformance(web, "web_search", { query: "tide tables", count: 3 });
});

it("web_fetch passes every rule of brain tools check, with its output schema", async () => {
  await expectConformance(web, "web_fetch", { url: `${pages.origin}/article.html` });
});

it("web_fetch passes them too while it answers with progress", async () => {
  await expectConformance(web, "web_fetch", { url: `${pages.origin}/slow.html` });
});
