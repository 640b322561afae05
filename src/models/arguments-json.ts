const made = new WeakMap<object, string>();

/**
 * A tool call's arguments as JSON text (what JSON.stringify makes of them), made once per
 * arguments object: the call's request body and both counts of its tokens (as its turn adds it,
 * and as its session's conversation folds it) read the same text, where each serialized it anew
 * (BENCHMARKS.md). The text lives as long as the arguments do; nothing changes arguments once a
 * model gave them.
 */
export function argumentsJson(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return JSON.stringify(args);
  let json = made.get(args);
  if (json === undefined) {
    json = JSON.stringify(args);
    made.set(args, json);
  }
  return json;
}
