import { inspect } from "node:util";

/**
 * A value that must never reach a log, an event, an error or a response. Serializing or
 * inspecting it gives "[redacted]"; only `reveal()` returns the value, at the point of use.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return "[redacted]";
  }

  toString(): string {
    return "[redacted]";
  }

  [inspect.custom](): string {
    return "[redacted]";
  }
}

const NAMED: Record<string, string> = {
  " ": "a space",
  "\t": "a tab",
  "\n": "a newline",
  "\r": "a carriage return",
};

/** What an unusable character is, in a person's words, without showing the secret around it. */
function kindOf(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  if (/\s/u.test(char)) return "a space character";
  if (/\p{Cc}/u.test(char)) return "a control character";
  return "a non-ASCII character";
}

/**
 * Why `value` cannot be a key or token, or undefined when it can. Keys and tokens travel in HTTP
 * headers (`Authorization: Bearer …`, `x-api-key`), where only visible ASCII arrives as it was
 * sent: whitespace ends the token or is trimmed, a control character is refused, and other
 * characters are encoded as each client likes. Such a key could never match, so it is refused
 * where it is read; the message says what and where, never the value. Pure.
 */
export function tokenProblem(value: string): string | undefined {
  if (value === "") return "is empty";
  const at = value.search(/[^\x21-\x7e]/);
  if (at < 0) return undefined;
  const unusable = (text: string) => /^[^\x21-\x7e]+$/.test(text);
  const where = unusable(value.slice(at))
    ? "at its end"
    : unusable(value.slice(0, at + 1))
      ? "at its start"
      : "inside";
  return `holds ${kindOf(value.charAt(at))} ${where}; a key or token is visible ASCII characters only (no spaces, no line ends)`;
}

/**
 * The secret in environment variable `name`, or the problem that stops its use: `ifMissing` when
 * it is unset or empty and the caller has its own words for that, else "environment variable
 * NAME is not set" (is empty, holds a newline at its end …).
 */
export function envSecret(
  env: NodeJS.ProcessEnv,
  name: string,
  ifMissing?: string,
): { ok: true; secret: Secret } | { ok: false; problem: string } {
  const value = env[name];
  const problem = value === undefined ? "is not set" : tokenProblem(value);
  if (problem === undefined) return { ok: true, secret: new Secret(value as string) };
  if (ifMissing !== undefined && !value) return { ok: false, problem: ifMissing };
  return { ok: false, problem: `environment variable ${name} ${problem}` };
}
