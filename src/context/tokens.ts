import { Buffer } from "node:buffer";
import type { ConversationMessage, ToolSpec } from "../models/provider.js";
import { resultParts } from "../models/result-parts.js";
import { argumentsJson } from "../models/tool-call.js";
import { KeptCounts } from "./kept-counts.js";

/** Counts the tokens of text for one provider family. */
export interface TokenCounter {
  /** "openai": OpenAI's own tokenizer (o200k_base); "estimate": from the characters, erring high. */
  family: "openai" | "estimate";
  text: (text: string) => number;
}

/**
 * Anthropic publishes no tokenizer for its current models, so its count is estimated, erring
 * high: 2.5 characters a token for ASCII (prose and code run 3.5 to 4, JSON with numbers nearer 3)
 * and 1.5 tokens for any other character (CJK runs about 1.25, Cyrillic and Greek under 1). Its
 * error against another tokenizer is measured in test/context/tokens.test.ts.
 */
export const ESTIMATE: TokenCounter = {
  family: "estimate",
  text: (text) => {
    // Most text is ASCII, and then its UTF-8 length is its length: Node measures that natively, a
    // fifteenth of the loop's time for a page of prose (a call's arguments, a result: each counted
    // as its turn adds it and again as the session's conversation folds it)
    if (Buffer.byteLength(text, "utf8") === text.length) return Math.ceil(text.length / 2.5);
    let ascii = 0;
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++;
    return Math.ceil(ascii / 2.5 + (text.length - ascii) * 1.5);
  },
};

let openAI: Promise<TokenCounter> | undefined;

// BPE takes time growing faster than a piece's length (64 KiB of one letter: seconds whole); pieces
// of this size bound it, and a token cut at a piece's edge counts twice: the count errs high
const PIECE_CHARS = 2048;
// text is counted as the model reads it: "<|endoftext|>" in a result is text, not a special token
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The counter for a model entry's provider. OpenAI's tokenizer is loaded the first time a session
 * of an OpenAI model needs it: its tables are a few megabytes a Brain without one never loads.
 */
export function tokenCounter(provider: "anthropic" | "openai" | "scripted"): Promise<TokenCounter> {
  if (provider !== "openai") return Promise.resolve(ESTIMATE);
  openAI ??= import("gpt-tokenizer/encoding/o200k_base").then(({ countTokens }) => ({
    family: "openai" as const,
    text: (text: string) => {
      let tokens = 0;
      for (let at = 0; at < text.length; at += PIECE_CHARS)
        tokens += countTokens(text.slice(at, at + PIECE_CHARS), AS_TEXT);
      return tokens;
    },
  }));
  return openAI;
}

// what each message and call costs beyond its text: role markers, ids, the call's framing
const PER_MESSAGE = 4;
const PER_CALL = 12;
// an image the size both providers scale down to (about 1.15 megapixels) costs about 1,600 tokens
const PER_IMAGE = 1600;

/** The tokens of one message as a provider is sent it. */
export function messageTokens(counter: TokenCounter, message: ConversationMessage): number {
  switch (message.role) {
    case "user":
      return PER_MESSAGE + counter.text(message.content);
    case "summary":
      return PER_MESSAGE + counter.text(message.text);
    case "assistant": {
      let tokens = PER_MESSAGE + counter.text(message.text);
      for (const call of message.tool_calls) {
        const args = typeof call.arguments === "string" ? call.arguments : argumentsJson(call);
        tokens += PER_CALL + counter.text(call.name) + counter.text(args ?? "");
      }
      return tokens;
    }
    case "tool": {
      let tokens = 0;
      for (const result of message.results) {
        tokens += PER_MESSAGE + PER_CALL;
        for (const part of resultParts(result))
          tokens += part.type === "text" ? counter.text(part.text) : PER_IMAGE;
      }
      return tokens;
    }
  }
}

// texts this long are counted once and kept (kept-counts.ts): shorter ones cost less to count again
const KEPT_FROM_CHARS = 1024;
const keptCounts = new WeakMap<TokenCounter, KeptCounts>();

/** The counter's count of `text`, kept across turns when the text is long. */
function countKept(counter: TokenCounter, text: string): number {
  if (text.length < KEPT_FROM_CHARS) return counter.text(text);
  let kept = keptCounts.get(counter);
  if (!kept) {
    kept = new KeptCounts(256, 4 * 1024 * 1024);
    keptCounts.set(counter, kept);
  }
  return kept.count(text, (long) => counter.text(long));
}

/** The tokens of what every request of a session carries besides its messages: the system prompt and the tools. */
export function requestTokens(
  counter: TokenCounter,
  system: string | undefined,
  tools: readonly ToolSpec[],
): number {
  let tokens = PER_MESSAGE + countKept(counter, system ?? "");
  for (const tool of tools)
    tokens +=
      PER_CALL +
      counter.text(tool.name) +
      countKept(counter, tool.description) +
      countKept(counter, schemaJson(tool.input_schema));
  return tokens;
}

const schemaJsons = new WeakMap<object, string>();

/**
 * A tool's input schema as JSON, made once per schema: every turn counts its requests' tools, and
 * a binding's schema is the host config's own object, the same at every turn. Serializing it
 * again was the largest JSON.stringify of a turn after its events' (BENCHMARKS.md).
 */
function schemaJson(schema: Record<string, unknown>): string {
  let json = schemaJsons.get(schema);
  if (json === undefined) {
    json = JSON.stringify(schema);
    schemaJsons.set(schema, json);
  }
  return json;
}
