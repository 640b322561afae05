/**
 * How deep JSON that enters Brain may nest. JSON.parse takes any depth, but JSON.stringify, which
 * every stored and streamed event goes through, overflows the stack a few thousand levels down:
 * a value that parsed would then fail to store, after its tool.call was already committed.
 */
const MAX_JSON_DEPTH = 256;

const INFINITE =
  "holds a number too large to store (JSON.parse reads it as Infinity, which JSON writes as null)";

/**
 * Why a parsed JSON value cannot be stored as it came, or undefined when it can: it nests arrays
 * and objects deeper than `maxDepth`, or it holds a number such as 1e400, which would be stored as
 * null (a tool's result would then no longer be what its output_schema allowed). It descends no
 * further than `maxDepth`, so any depth is safe; and it allocates nothing, since every tool call
 * judges its result and its arguments (an explicit stack cost an object and an array a level).
 */
export function unstorable(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  return problemAt(value, 1, maxDepth);
}

function problemAt(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : INFINITE;
  if (value === null || typeof value !== "object") return undefined;
  if (depth > maxDepth) return `nests deeper than ${maxDepth} levels`;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const problem = problemAt(value[index], depth + 1, maxDepth);
      if (problem) return problem;
    }
    return undefined;
  }
  // JSON.parse makes plain objects: every enumerable property for…in finds is their own
  for (const key in value) {
    const problem = problemAt((value as Record<string, unknown>)[key], depth + 1, maxDepth);
    if (problem) return problem;
  }
  return undefined;
}
