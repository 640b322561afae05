/**
 * How deep JSON that enters Brain may nest. JSON.parse takes any depth, but JSON.stringify, which
 * every stored and streamed event goes through, overflows the stack a few thousand levels down:
 * a value that parsed would then fail to store, after its tool.call was already committed.
 */
export const MAX_JSON_DEPTH = 256;

/** Whether a parsed JSON value nests arrays and objects deeper than `max`; iterative, so any depth is safe. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { node, depth } = next;
    if (node === null || typeof node !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}
