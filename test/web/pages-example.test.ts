import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedProcess, startProcess } from "../helpers/processes.js";
import { exchangeRaw } from "../helpers/raw-http.js";

// examples/web/pages.mjs, the page server of the README's web_fetch demo, on a free port.
let pages: StartedProcess & { ready: string };

beforeAll(async () => {
  pages = await startProcess(
    ["examples/web/pages.mjs"],
    { PORT: "0" },
    (line) => line.match(/^pages on (\S+)/)?.[1],
  );
});

afterAll(async () => {
  await pages?.stop();
});

describe("examples/web/pages.mjs", () => {
  it("prints the port it listens on, not the 0 it was given", async () => {
    expect(new URL(pages.ready).port).not.toBe("0");
    const page = await fetch(pages.ready);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("answers 400 to a request target that is no URL, and keeps serving", async () => {
    const reply = await exchangeRaw(
      pages.ready,
      "GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(pages.ready)).status).toBe(200);
    expect(pages.child.exitCode).toBeNull();
  });
});
