/**
 * A Content-Type's media type as sent: its parameters cut off and its whitespace trimmed, its case
 * kept (a caller that quotes it quotes what was sent); empty when there is none. `indexOf` rather
 * than `split`, which made an array and looked `split` up on the separator's prototype chain: 1.7 k
 * instructions of every tool call's (BENCHMARKS.md).
 */
export function mediaTypeOf(contentType: string | undefined): string {
  if (contentType === undefined) return "";
  const semicolon = contentType.indexOf(";");
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim();
}
