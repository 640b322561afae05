import type { ContentItem, ToolResult } from "../../protocol/result.js";

export const REDACTED = "[redacted]";

/**
 * `value` with every occurrence of a secret in its strings (object keys included) replaced: what
 * a tool service sends back is stored and shown to the model, and a service that echoes its
 * request (its bearer token, the inspection token) must not put either there. The same value,
 * not a copy, when nothing is found, which is the usual case on the hot path. Pure.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const present = secrets.filter((secret) => secret !== "" && holds(value, secret));
  return present.length === 0 ? value : (replaceIn(value, present) as T);
}

/**
 * A call's result with every secret replaced in what the service wrote: its content items' text,
 * data and fields, its structured_content (keys included), an error's message. The protocol's own
 * names are left as they are, the keys of the result and of its content items, an item's `type`
 * and an error's `code`: a secret that happens to be in one of them (a token such as "text") must
 * not turn the result into one the protocol does not know. The very result when nothing is found.
 * Pure.
 */
export function redactResult(result: ToolResult, secrets: readonly string[]): ToolResult {
  const present = secrets.filter((secret) => secret !== "" && holds(result, secret));
  if (present.length === 0) return result;
  const redacted: ToolResult = {
    ...result,
    content: result.content.map((item) => redactItem(item, present)),
  };
  if (result.structured_content !== undefined)
    redacted.structured_content = replaceIn(result.structured_content, present) as Record<string, unknown>;
  if (result.error !== undefined)
    redacted.error = { code: result.error.code, message: replaceIn(result.error.message, present) as string };
  return redacted;
}

/** A content item with its fields' values redacted: every field but `type` is the service's text. */
function redactItem(item: ContentItem, secrets: readonly string[]): ContentItem {
  const redacted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item))
    redacted[key] = key === "type" ? value : replaceIn(value, secrets);
  return redacted as ContentItem;
}

/**
 * The start of `text`, at most `max` characters, with every secret replaced and no piece of one
 * left where the text is cut. Redaction comes before the cut (a secret straddling the cut would
 * otherwise survive in part), and a cut text may still end in the first characters of a secret
 * whose rest was cut away: those are dropped. `complete` says whether `text` is all there was;
 * when it is not, its own end is a cut too. Pure.
 */
export function redactedStart(
  text: string,
  max: number,
  secrets: readonly string[],
  complete: boolean,
): string {
  const present = secrets.filter((secret) => secret !== "");
  let start = present.reduce((out, secret) => out.replaceAll(secret, REDACTED), text);
  if (!complete) start = withoutSecretPrefixAtEnd(start, present);
  if (start.length > max) start = withoutSecretPrefixAtEnd(start.slice(0, max), present);
  return start;
}

/** `text` less its longest ending that is the beginning of a secret. */
function withoutSecretPrefixAtEnd(text: string, secrets: readonly string[]): string {
  let cut = 0;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, text.length); length > cut; length--) {
      if (text.endsWith(secret.slice(0, length))) {
        cut = length;
        break;
      }
    }
  }
  return text.slice(0, text.length - cut);
}

// loops rather than some() and Object.entries: every tool result is searched, with no garbage left
function holds(value: unknown, secret: string): boolean {
  if (typeof value === "string") return value.includes(secret);
  if (Array.isArray(value)) {
    for (const item of value) if (holds(item, secret)) return true;
  } else if (value && typeof value === "object") {
    for (const key in value) {
      if (key.includes(secret) || holds((value as Record<string, unknown>)[key], secret)) return true;
    }
  }
  return false;
}

function replaceIn(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string")
    return secrets.reduce((text, secret) => text.replaceAll(secret, REDACTED), value);
  if (Array.isArray(value)) return value.map((item) => replaceIn(item, secrets));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [replaceIn(key, secrets), replaceIn(item, secrets)]),
    );
  }
  return value;
}
