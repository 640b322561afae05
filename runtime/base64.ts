// the standard or the URL-safe alphabet, padding optional, line breaks anywhere: models produce all
// of them
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The bytes `text` stands for as base64, or undefined when it is not base64. Node's own decoder
 * skips what is not base64, and a character too many or too few, so text sent as base64 would
 * become other bytes without a word.
 */
export function base64Bytes(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, "");
  if (!BASE64.test(compact)) return undefined;
  const digits = compact.replace(/=+$/, "").length;
  // one digit left over holds no whole byte; padding, where there is any, fills the last quartet
  if (digits % 4 === 1) return undefined;
  if (compact.length > digits && compact.length % 4 !== 0) return undefined;
  return Buffer.from(compact, "base64");
}
