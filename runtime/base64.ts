// the standard or the URL-safe alphabet, padding optional, line breaks anywhere: models produce all
// of them
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The bytes `text` stands for as base64, or undefined when it is not base64. Node's own decoder
 * skips what is not base64, so text sent as base64 would become garbage bytes without a word.
 */
export function base64Bytes(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, "");
  if (!BASE64.test(compact) || compact.length % 4 === 1) return undefined;
  return Buffer.from(compact, "base64");
}
