import { createContext, Script } from "node:vm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type LocalTools, operator, startLocalTools } from "./local-tools-process.js";

// The operator page's own script, parsed and run in node:vm: the page as the service serves it,
// the real fetch against the real service. The DOM, sessionStorage and setInterval are stubs (the
// 3 s poll is recorded, not run; no browser, so no CSP or layout). The stub's elements are the
// page's elements with an id, so a script that looks for one the page lacks fails here.

let tools: LocalTools;

beforeAll(async () => {
  tools = await startLocalTools();
});
afterAll(async () => {
  await tools?.stop();
});

class StubElement {
  textContent = "";
  className = "";
  value = "";
  readonly children: StubElement[] = [];
  readonly #listeners = new Map<string, (event: unknown) => void>();

  constructor(readonly tagName: string) {}

  append(...nodes: StubElement[]) {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes: StubElement[]) {
    this.children.splice(0, this.children.length, ...nodes);
  }
  addEventListener(type: string, listener: (event: unknown) => void) {
    this.#listeners.set(type, listener);
  }
  dispatch(type: string, event: object = {}) {
    this.#listeners.get(type)?.({ preventDefault: () => {}, ...event });
  }
}

/** Run the page's script against a stub DOM whose elements are the page's elements with an id. */
function runPage(html: string) {
  const code = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
  expect(code, "the page has an inline script").toBeDefined();
  const script = new Script(code as string, { filename: "operator-page.js" });
  const elements = new Map<string, StubElement>();
  for (const [, tag, id] of html.matchAll(/<(\w+) id="([^"]+)"/g)) {
    elements.set(id as string, new StubElement(tag as string));
  }
  const storage = new Map<string, string>();
  const timers: { callback: () => void; ms: number }[] = [];
  script.runInContext(
    createContext({
      document: {
        getElementById: (id: string) => elements.get(id) ?? null,
        createElement: (tag: string) => new StubElement(tag),
      },
      sessionStorage: {
        getItem: (key: string) => storage.get(key) ?? null,
        setItem: (key: string, value: string) => storage.set(key, String(value)),
      },
      // the page asks for paths on its own origin, as a browser resolves them
      fetch: (path: string, init: RequestInit) => fetch(new URL(path, tools.url), init),
      setInterval: (callback: () => void, ms: number) => timers.push({ callback, ms }),
    }),
  );
  const element = (id: string) => {
    const found = elements.get(id);
    if (!found) throw new Error(`the page has no #${id}`);
    return found;
  };
  return { element, storage, timers };
}

it("runs its script: asks for the token, lists what waits, and posts the person's answer", async () => {
  const question = "Publish <b>v2</b> to everyone?";
  const call = await fetch(`${tools.url}/tools/ask_approval`, {
    method: "POST",
    headers: { authorization: `Bearer ${tools.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      tenant_id: "acme",
      session_id: "ses_page",
      call_id: "call_page",
      arguments: { question },
    }),
    signal: AbortSignal.timeout(15_000),
  });
  const result = call.text();
  await expect
    .poll(async () => (await operator(tools, "GET", "/operator/approvals")).json().approvals.length)
    .toBe(1);
  const [approval] = (await operator(tools, "GET", "/operator/approvals")).json().approvals;

  const page = await fetch(`${tools.url}/operator`);
  const { element, storage, timers } = runPage(await page.text());
  const status = () => element("status").textContent;
  expect(status()).toMatch(/^Enter the operator token/);
  expect(timers.map((timer) => timer.ms)).toEqual([3000]);

  element("token").value = tools.token;
  element("login").dispatch("submit");
  await expect.poll(status).toBe("the operator token is missing or wrong");

  element("token").value = ` ${tools.operatorToken} `;
  element("by").value = "page-person";
  element("login").dispatch("submit");
  expect(storage.get("operator-token")).toBe(tools.operatorToken);
  await expect.poll(() => element("list").children.length).toBe(1);
  expect(status()).toBe("");
  const [box] = element("list").children as [StubElement];
  const [text, meta, yes, no] = box.children as [StubElement, StubElement, StubElement, StubElement];
  expect(text).toMatchObject({ className: "question", textContent: question });
  expect(meta.textContent).toContain(`${approval.id} · tenant acme · session ses_page · expires `);
  expect([yes.tagName, yes.textContent, no.textContent]).toEqual(["button", "Yes", "No"]);

  yes.dispatch("click");
  await expect.poll(() => element("list").children[0]?.textContent).toBe("Nothing is waiting.");
  expect(element("outcome").textContent).toBe(`${approval.id}: answered yes`);
  expect(status()).toBe("");
  const answered = (await operator(tools, "GET", `/operator/approvals/${approval.id}`)).json();
  expect(answered).toMatchObject({ status: "yes", answered_by: "page-person" });
  expect(await result).toContain('"text":"Operator answered yes."');

  // a click on the stale box is refused, and the page still says why once the list has reloaded
  const shown = element("list").children[0];
  no.dispatch("click");
  await expect.poll(() => element("list").children[0]).not.toBe(shown);
  expect(element("outcome").textContent).toBe(
    `${approval.id}: approval ${approval.id} was already answered yes`,
  );
  expect(status()).toBe("");
});
