import { SandboxError } from "./errors.js";

// the standard or the URL-safe alphabet, padding optional: models produce all of them. The same
// rule as the storage service's (services/storage/encoding.ts): a file the one takes, the other does
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The bytes a write's `content` stands for. Node's base64 decoder skips what is not base64, so
 * text sent as base64 would be written as garbage and reported written: it is refused instead.
 */
export function decodeContent(content: string, encoding: "utf8" | "base64"): Buffer {
  if (encoding === "utf8") return Buffer.from(content, "utf8");
  const compact = content.replace(/\s+/g, "");
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    throw new SandboxError("invalid_argument", 'content is not valid base64; send text with encoding "utf8"');
  }
  return Buffer.from(compact, "base64");
}
