import { base64Bytes } from "../../runtime/base64.js";
import { SandboxError } from "./errors.js";

/** The bytes a write's `content` stands for; base64 that is not base64 is refused, not guessed at. */
export function decodeContent(content: string, encoding: "utf8" | "base64"): Buffer {
  if (encoding === "utf8") return Buffer.from(content, "utf8");
  const bytes = base64Bytes(content);
  if (!bytes) {
    throw new SandboxError("invalid_argument", 'content is not valid base64; send text with encoding "utf8"');
  }
  return bytes;
}
