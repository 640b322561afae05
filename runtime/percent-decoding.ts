/**
 * `text` with its percent-escapes undone, or undefined when one of them is broken (`%E0%A4%A`):
 * what a path segment from a peer names, where decodeURIComponent would throw.
 */
export function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
