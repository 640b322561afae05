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
 * null (a tool's result would then no longer be what its output_schema allowed). Iterative, so
 * any depth is safe.
 */
export function unstorable(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  if (typeof value === "number" && !Number.isFinite(value)) return INFINITE;
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { node, depth } = next;
    if (node === null || typeof node !== "object") continue;
    if (depth > maxDepth) return `nests deeper than ${maxDepth} levels`;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push({ node: child, depth: depth + 1 });
      else if (typeof child === "number" && !Number.isFinite(child)) return INFINITE;
    }
  }
  return undefined;
}
