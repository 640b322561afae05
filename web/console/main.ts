import type { Session } from "../../protocol/session.js";
import { BrainApiError, BrainClient, type StreamStatus } from "../../src/client/client.js";
import { byId, el } from "./dom.js";
import { EventView } from "./event-view.js";

/**
 * The web console: a key pasted once per tab (sessionStorage: gone with the tab, never in a URL),
 * the tenant's sessions, one session's events live, and what a person does with a session. The
 * open session's id is the page's #fragment, so a reload opens it again.
 */

const KEY_ITEM = "brain.console.key";
const PAGE_SIZE = 20;

let client: BrainClient | undefined;
let watching: AbortController | undefined;
let nextCursor: string | null = null;

const show = (id: string, visible: boolean) => {
  byId(id).hidden = !visible;
};

function say(text: string, tone: "" | "error" = ""): void {
  const line = byId("message");
  line.textContent = text;
  line.className = tone;
}

function explain(error: unknown): string {
  return error instanceof BrainApiError
    ? `${error.code}: ${error.message}`
    : String((error as Error)?.message ?? error);
}

/** Run an action: its failure is shown, never thrown away; resolves whether it succeeded. */
async function attempt(action: () => Promise<void>): Promise<boolean> {
  say("");
  try {
    await action();
    return true;
  } catch (error) {
    say(explain(error), "error");
    return false;
  }
}

/** The handler of a button or form that runs `action`. */
function act(action: () => Promise<void>): () => void {
  return () => void attempt(action);
}

async function connect(key: string): Promise<void> {
  const candidate = new BrainClient(location.origin, key);
  // the catalog proves the key and fills the new-session form
  const catalog = await candidate.catalog();
  sessionStorage.setItem(KEY_ITEM, key);
  // once it works it is kept in sessionStorage only: the form must not hold it for the next person
  byId<HTMLInputElement>("key").value = "";
  client = candidate;
  show("login", false);
  show("app", true);
  const tools = byId("tools");
  tools.replaceChildren(
    ...catalog.tools.map((tool) =>
      el(
        "label",
        { attrs: { title: tool.description } },
        el("input", { attrs: { type: "checkbox", name: "tool", value: tool.name } }),
        document.createTextNode(` ${tool.name}`),
      ),
    ),
  );
  if (catalog.tools.length === 0) tools.append(el("span", { text: "no tools offered to this key" }));
  await loadSessions(true);
  const opened = location.hash.slice(1);
  if (opened) await openSession(decodeURIComponent(opened));
}

function forget(): void {
  sessionStorage.removeItem(KEY_ITEM);
  client = undefined;
  location.hash = "";
  // nothing of this key's tenant stays on screen for the next key, nor an id its buttons would act on
  closeSessionView();
  byId("sessions").replaceChildren();
  byId("tools").replaceChildren();
  show("app", false);
  show("login", true);
}

/** No session open: its stream stopped, its id, details and events gone. */
function closeSessionView(): void {
  watching?.abort();
  watching = undefined;
  show("session", false);
  for (const id of ["session-id", "session-meta", "session-status", "events", "connection"]) {
    byId(id).replaceChildren();
  }
  byId("connection").dataset.state = "";
}

async function loadSessions(first: boolean): Promise<void> {
  if (!client) return;
  const list = byId("sessions");
  if (first) {
    list.replaceChildren();
    nextCursor = null;
  }
  const page = await client.listSessions({ limit: PAGE_SIZE, ...(nextCursor && { cursor: nextCursor }) });
  nextCursor = page.next_cursor;
  for (const session of page.sessions) list.append(sessionItem(session));
  show("more", nextCursor !== null);
}

function sessionItem(session: Session): HTMLElement {
  const button = el(
    "button",
    { className: "session", attrs: { type: "button", "data-id": session.id } },
    el("span", { className: "id", text: session.id }),
    el("span", { className: `status ${session.status}`, text: session.status }),
    el("span", { className: "meta", text: `${session.config.model} · ${session.created_at.slice(0, 19)}` }),
  );
  button.addEventListener(
    "click",
    act(() => openSession(session.id)),
  );
  return el("li", {}, button);
}

async function createSession(): Promise<void> {
  if (!client) return;
  const form = byId<HTMLFormElement>("create");
  const tools = [...form.querySelectorAll<HTMLInputElement>("input[name=tool]:checked")].map(
    (input) => input.value,
  );
  const model = byId<HTMLInputElement>("model").value.trim();
  const system = byId<HTMLTextAreaElement>("system").value;
  const session = await client.createSession({ tools, ...(model && { model }), ...(system && { system }) });
  await loadSessions(true);
  await openSession(session.id);
}

async function openSession(id: string): Promise<void> {
  if (!client) return;
  const session = await client.getSession(id);
  watching?.abort();
  const controller = new AbortController();
  watching = controller;
  history.replaceState(null, "", `#${encodeURIComponent(id)}`);
  show("session", true);
  byId("session-id").textContent = session.id;
  byId("session-meta").textContent =
    `${session.config.model} · tools: ${session.config.tools.join(", ") || "none"}`;
  setStatus(session.status);
  const view = new EventView(byId("events"), (callId, decision) =>
    attempt(async () => {
      await client?.answerApproval(id, callId, { decision });
    }),
  );
  watch(client, id, view, controller.signal).catch((error: unknown) => {
    if (!controller.signal.aborted) say(explain(error), "error");
  });
}

function setStatus(status: string): void {
  const node = byId("session-status");
  node.textContent = status;
  node.className = `status ${status}`;
  const closed = status === "closed";
  for (const id of ["send", "interrupt", "close"]) byId<HTMLButtonElement>(id).disabled = closed;
}

function setConnection(status: StreamStatus | { state: "ended" }): void {
  const node = byId("connection");
  node.dataset.state = status.state;
  node.textContent =
    status.state === "connected"
      ? "live"
      : status.state === "reconnecting"
        ? `connection lost (${status.error.message}); reconnecting after #${status.after} in ${Math.round(status.delayMs / 100) / 10} s`
        : "stream ended";
}

async function watch(brain: BrainClient, id: string, view: EventView, signal: AbortSignal): Promise<void> {
  for await (const event of brain.streamEvents(id, { signal, onStatus: setConnection })) {
    // events already read when the stream was stopped belong to a view that is gone
    if (signal.aborted) return;
    view.add(event);
    if (event.type === "turn.started") setStatus("running");
    if (
      event.type === "turn.completed" ||
      event.type === "turn.failed" ||
      event.type === "turn.interrupted"
    ) {
      setStatus("idle");
    }
    if (event.type === "session.closed") setStatus("closed");
  }
  if (!signal.aborted) setConnection({ state: "ended" });
}

function currentId(): string {
  return byId("session-id").textContent ?? "";
}

async function send(): Promise<void> {
  if (!client) return;
  const input = byId<HTMLTextAreaElement>("input");
  const content = input.value;
  if (!content.trim()) return;
  await client.sendMessage(currentId(), content);
  input.value = "";
}

function main(): void {
  byId("login").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = byId<HTMLInputElement>("key").value.trim();
    act(() => connect(key))();
  });
  byId("forget").addEventListener("click", forget);
  byId("refresh").addEventListener(
    "click",
    act(() => loadSessions(true)),
  );
  byId("more").addEventListener(
    "click",
    act(() => loadSessions(false)),
  );
  byId("create").addEventListener("submit", (event) => {
    event.preventDefault();
    act(createSession)();
  });
  byId("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    act(send)();
  });
  byId("input").addEventListener("keydown", (event) => {
    // Enter sends, Shift+Enter is a new line, as in every chat
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      act(send)();
    }
  });
  byId("interrupt").addEventListener(
    "click",
    act(async () => {
      await client?.interrupt(currentId());
    }),
  );
  byId("close").addEventListener(
    "click",
    act(async () => {
      await client?.close(currentId());
      await loadSessions(true);
    }),
  );
  const key = sessionStorage.getItem(KEY_ITEM);
  if (key) {
    act(async () => {
      try {
        await connect(key);
      } catch (error) {
        // a key that no longer works is forgotten, so the form asks for another
        if (error instanceof BrainApiError && error.status === 401) forget();
        throw error;
      }
    })();
  }
}

main();
