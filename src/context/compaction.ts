import type { ConversationMessage } from "../models/provider.js";
import { resultParts } from "../models/result-parts.js";
import { type HistoryEntry, turnsIn } from "./history.js";
import { messageTokens, type TokenCounter } from "./tokens.js";

/**
 * Where to cut a conversation to compact it: the index of the first message kept, so that the
 * messages before it are summarised. A cut is only ever made before a stored user message, so a
 * tool call and its result are never parted, and never after the latest one, so the turn under
 * way keeps its question. The cut keeps the newest whole turns that fit in `keep` tokens (at
 * least the latest). Undefined when there is nothing to summarise. Pure.
 */
export function chooseCut(entries: readonly HistoryEntry[], keep: number): number | undefined {
  // what is summarised holds more than an earlier summary: the first cut is past the first turn after it
  const first = entries[0]?.message.role === "summary" ? 2 : 1;
  let latest: number | undefined;
  for (let i = entries.length - 1; i >= first; i--) {
    if (isStoredUser(entries[i])) {
      latest = i;
      break;
    }
  }
  if (latest === undefined) return undefined;
  let cut = latest;
  let kept = 0;
  for (let i = entries.length - 1; i >= latest; i--) kept += (entries[i] as HistoryEntry).tokens;
  for (let i = latest - 1; i >= first; i--) {
    kept += (entries[i] as HistoryEntry).tokens;
    if (kept > keep) break;
    if (isStoredUser(entries[i])) cut = i;
  }
  return cut;
}

function isStoredUser(entry: HistoryEntry | undefined): boolean {
  return entry?.message.role === "user" && entry.seq !== Number.MAX_SAFE_INTEGER;
}

/** The instructions of a summarising model call. */
export const COMPACTION_PROMPT = `You compact the conversation of a long-running agent session so that it fits the model's context window. You are given the oldest part of the conversation as a transcript. Write a summary that lets the assistant carry on as if it had read the whole: the user's goals and instructions, decisions made, facts learned (names, numbers, paths, ids), what tools were called and what they returned that still matters, and what is left to do. Be concise and factual; write the summary only.`;

/**
 * The summarising request for the messages before a cut: one user message holding them as a
 * transcript, counted with the summarising model's `counter` (entries `countedBy` another are
 * counted again). When they pass `budget` tokens, the oldest are left out of it (a summary from an
 * earlier compaction, always first, stays); `left` says how many. Pure.
 */
export function compactionMessages(
  entries: readonly HistoryEntry[],
  budget: number,
  counter: TokenCounter,
  countedBy: TokenCounter,
): { messages: ConversationMessage[]; left: number } {
  const tokensOf = (entry: HistoryEntry) =>
    counter === countedBy ? entry.tokens : messageTokens(counter, entry.message);
  const lines: string[] = [];
  let room = budget - counter.text(COMPACTION_PROMPT);
  const first = entries[0];
  const start = first?.message.role === "summary" ? 1 : 0;
  if (first && start === 1) room -= tokensOf(first);
  // newest first, and no further than what fits: another model's count of a long part costs time
  let from = entries.length;
  while (from > start) {
    const tokens = tokensOf(entries[from - 1] as HistoryEntry);
    if (room - tokens < 0) break;
    from--;
    room -= tokens;
  }
  if (first && start === 1) lines.push(transcriptOf(first.message));
  const left = from - start;
  if (left > 0) lines.push(`[${left} older messages are left out here: they did not fit]`);
  for (const entry of entries.slice(from)) lines.push(transcriptOf(entry.message));
  return {
    messages: [
      { role: "user", content: `${lines.join("\n\n")}\n\nWrite the summary of the conversation above.` },
    ],
    left,
  };
}

/** What a summary says of the messages its model could not be sent. */
export function leftOutNote(left: number): string {
  return `[This summary leaves out the ${left} oldest of the messages it replaces, which did not fit the summarising model's context window; the session's events keep them all.]`;
}

function transcriptOf(message: ConversationMessage): string {
  switch (message.role) {
    case "summary":
      return `Summary of what came before:\n${message.text}`;
    case "user":
      return `User: ${message.content}`;
    case "assistant":
      return [
        ...(message.text === "" ? [] : [`Assistant: ${message.text}`]),
        ...message.tool_calls.map(
          (call) => `Assistant called ${call.name} with ${JSON.stringify(call.arguments) ?? "nothing"}`,
        ),
      ].join("\n");
    case "tool":
      return message.results
        .map((result) => {
          const text = resultParts(result)
            .map((part) => (part.type === "text" ? part.text : `[image ${part.mime_type}]`))
            .join("\n");
          return `Result of ${result.name}${result.is_error ? " (an error)" : ""}: ${text}`;
        })
        .join("\n");
  }
}

/**
 * What the model reads in place of the turns that "truncate" left out: those of an earlier note or
 * summary it replaces included.
 */
export function truncationNote(entries: readonly HistoryEntry[]): string {
  const turns = turnsIn(entries);
  return `[${turns} earlier turn${turns === 1 ? " was" : "s were"} left out here to fit the model's context window; the session's events keep them all.]`;
}
