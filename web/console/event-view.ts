import type { SessionEvent } from "../../protocol/events.js";
import { el, pretty } from "./dom.js";

type Of<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;

/**
 * How a person's answer to a call that waits for approval reaches Brain; resolves whether Brain
 * took it (a failure is the caller's to show).
 */
export type AnswerApproval = (callId: string, decision: "approve" | "deny") => Promise<boolean>;

/** The progress lines a tool card keeps: the newest, since a long run sends thousands. */
const MAX_PROGRESS_LINES = 50;

/**
 * A session's events as cards, in order: each stored event once (by seq, so a resumed stream that
 * sends one again changes nothing), live text and progress in the card they belong to.
 */
export class EventView {
  readonly #root: HTMLElement;
  #lastSeq = 0;
  #live: { node: HTMLElement; attempt: number } | undefined;
  readonly #toolCards = new Map<string, HTMLElement>();

  constructor(
    root: HTMLElement,
    private readonly answer: AnswerApproval,
  ) {
    this.#root = root;
    root.replaceChildren();
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  add(event: SessionEvent): void {
    if ("seq" in event) {
      if (event.seq <= this.#lastSeq) return;
      this.#lastSeq = event.seq;
    }
    const card = this.#render(event);
    if (!card) return;
    if ("seq" in event) card.dataset.seq = String(event.seq);
    card.dataset.type = event.type;
    this.#root.append(card);
    card.scrollIntoView({ block: "end" });
  }

  #render(event: SessionEvent): HTMLElement | undefined {
    switch (event.type) {
      case "session.created": {
        const { config } = event.data;
        return note(event, `model ${config.model}, tools: ${config.tools.join(", ") || "none"}`);
      }
      case "message.user":
        return card("user", "You", el("p", { className: "text", text: event.data.content }));
      case "model.delta":
        return this.#delta(event);
      case "message.assistant":
        return this.#assistant(event);
      case "tool.call":
        return this.#toolCall(event);
      case "tool.approval_requested":
        this.#approvalRequested(event);
        return undefined;
      case "tool.approval":
        this.#approval(event);
        return undefined;
      case "message.queued":
        return card("user queued", "You (queued)", el("p", { className: "text", text: event.data.content }));
      case "tool.progress":
        this.#progress(event);
        return undefined;
      case "tool.result":
        return this.#toolResult(event);
      case "turn.started":
        return note(event, "turn started");
      case "turn.completed": {
        const { stop_reason, steps, usage } = event.data;
        return note(
          event,
          `turn completed: ${stop_reason}, ${steps} step${steps === 1 ? "" : "s"}, ${usage.input_tokens} tokens in, ${usage.output_tokens} out`,
        );
      }
      case "turn.interrupted":
        this.#cutShort();
        return note(event, `turn interrupted: ${event.data.reason}`, "warn");
      case "turn.failed":
        this.#cutShort();
        return note(event, `turn failed: ${event.data.error.code}: ${event.data.error.message}`, "error");
      case "session.closed":
        return note(event, "session closed");
      default:
        return generic(event);
    }
  }

  /** Live text goes into one card until the stored message replaces it; a retry starts it over. */
  #delta(event: Of<"model.delta">): HTMLElement | undefined {
    const { text, attempt } = event.data;
    if (this.#live && attempt > this.#live.attempt) {
      this.#live.node.textContent = "";
      this.#live.attempt = attempt;
    }
    if (this.#live) {
      this.#live.node.append(text);
      return undefined;
    }
    const node = el("p", { className: "text", text });
    this.#live = { node, attempt };
    return card("assistant live", "Assistant (writing…)", node);
  }

  /** A turn that ended while the model wrote: its text stays, said to be unfinished (never stored). */
  #cutShort(): void {
    const live = this.#live?.node.closest<HTMLElement>(".card");
    this.#live = undefined;
    const title = live?.querySelector("h3");
    if (title) title.textContent = "Assistant (cut short: this text was not stored)";
  }

  #assistant(event: Of<"message.assistant">): HTMLElement | undefined {
    const live = this.#live?.node.closest<HTMLElement>(".card");
    this.#live = undefined;
    live?.remove();
    const calls = event.data.tool_calls.map((call) => call.name).join(", ");
    // a step that only calls tools: its calls have cards of their own
    if (!event.data.text) return note(event, `assistant calls ${calls}`);
    return card(
      "assistant",
      "Assistant",
      el("p", { className: "text", text: event.data.text }),
      calls ? el("div", { className: "meta", text: `then calls ${calls}` }) : undefined,
    );
  }

  #toolCall(event: Of<"tool.call">): HTMLElement {
    const { call_id, name, arguments: args } = event.data;
    const node = card(
      "tool",
      `${name}`,
      el("div", { className: "meta", text: call_id }),
      el("pre", { className: "arguments", text: pretty(args) }),
      el("ol", { className: "progress" }),
      el("div", { className: "result pending", text: "running…" }),
    );
    node.dataset.callId = call_id;
    this.#toolCards.set(call_id, node);
    return node;
  }

  /** The call's card waits for a person: its buttons answer, until an answer or a result is stored. */
  #approvalRequested(event: Of<"tool.approval_requested">): void {
    const owner = this.#toolCards.get(event.data.call_id);
    if (!owner) return;
    const { call_id } = event.data;
    const approve = el("button", { className: "approve", text: "Approve", attrs: { type: "button" } });
    const deny = el("button", { className: "deny", text: "Deny", attrs: { type: "button" } });
    for (const [button, decision] of [
      [approve, "approve"],
      [deny, "deny"],
    ] as const) {
      button.addEventListener("click", async () => {
        approve.disabled = true;
        deny.disabled = true;
        // an answer lost or refused leaves the call waiting: the buttons must be able to answer again
        if (!(await this.answer(call_id, decision))) {
          approve.disabled = false;
          deny.disabled = false;
        }
      });
    }
    owner.classList.add("waiting");
    owner.querySelector(".result")?.replaceWith(
      el(
        "div",
        { className: "result pending approval" },
        el("p", {
          className: "text",
          text: `waits for approval until ${new Date(event.data.expires_at).toLocaleString()}`,
        }),
        approve,
        deny,
      ),
    );
  }

  #approval(event: Of<"tool.approval">): void {
    const owner = this.#toolCards.get(event.data.call_id);
    owner?.classList.remove("waiting");
    const { decision, reason, expired } = event.data;
    const said = expired
      ? "nobody answered in time"
      : `${decision === "approve" ? "approved" : "denied"}${reason ? `: ${reason}` : ""}`;
    owner
      ?.querySelector(".result.approval")
      ?.replaceWith(
        el("div", { className: "result pending", text: decision === "approve" ? `${said}; running…` : said }),
      );
  }

  #progress(event: Of<"tool.progress">): void {
    const list = this.#toolCards.get(event.data.call_id)?.querySelector(".progress");
    if (!list) return;
    list.append(
      el("li", { text: typeof event.data.data === "string" ? event.data.data : pretty(event.data.data) }),
    );
    while (list.childElementCount > MAX_PROGRESS_LINES) list.firstElementChild?.remove();
  }

  #toolResult(event: Of<"tool.result">): HTMLElement | undefined {
    const result = event.data;
    const outcome = result.is_error ? `error ${result.error?.code ?? ""}`.trim() : "ok";
    const text = result.content.flatMap((item) => (item.type === "text" ? [item.text] : [`[${item.type}]`]));
    const view = el(
      "div",
      { className: `result ${result.is_error ? "error" : "ok"}` },
      el(
        "div",
        { className: "outcome" },
        el("span", { className: "code", text: outcome }),
        result.unknown_outcome
          ? el("span", { className: "unknown", text: "unknown_outcome: it may have run" })
          : undefined,
        el("span", { className: "duration", text: `${formatMs(result.duration_ms)}` }),
      ),
      result.error ? el("p", { className: "text", text: result.error.message }) : undefined,
      text.length > 0 ? el("pre", { className: "content", text: text.join("\n") }) : undefined,
      result.structured_content !== undefined
        ? el("pre", { className: "structured", text: pretty(result.structured_content) })
        : undefined,
    );
    const owner = this.#toolCards.get(result.call_id);
    if (!owner) return card("tool", result.name, view);
    owner.querySelector(".result")?.replaceWith(view);
    owner.dataset.resultSeq = String(event.seq);
    // the result belongs to its call's card; an empty marker keeps its seq in the page's order
    return el("div", { className: "marker" });
  }
}

function card(kind: string, title: string, ...body: (Node | undefined)[]): HTMLElement {
  return el("article", { className: `card ${kind}` }, el("h3", { text: title }), ...body);
}

function note(event: SessionEvent, text: string, tone = ""): HTMLElement {
  return el("div", { className: `note ${tone}`.trim(), text: `${stamp(event)}${text}` });
}

/** An event this console has no card of its own for: its type and data, as they came. */
function generic(event: SessionEvent): HTMLElement {
  const { type, data } = event as { type: string; data: unknown };
  return card("generic", type, el("pre", { text: pretty(data) }));
}

function stamp(event: SessionEvent): string {
  return "seq" in event ? `#${event.seq} ` : "";
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
