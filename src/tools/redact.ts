export const REDACTED = "[redacted]";

/**
 * `value` with every occurrence of a secret in its strings (object keys included) replaced: what
 * a tool service sends back is stored and shown to the model, and a service that echoes its
 * request (its bearer token, the inspection token) must not put either there. The same value,
 * not a copy, when nothing is found, which is the usual case on the hot path. Pure.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const present = secrets.filter((secret) => secret !== "" && holds(value, secret));
  return present.length === 0 ? value : (replaceIn(value, present) as T);
}

function holds(value: unknown, secret: string): boolean {
  if (typeof value === "string") return value.includes(secret);
  if (Array.isArray(value)) return value.some((item) => holds(item, secret));
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes(secret) || holds(item, secret)) return true;
    }
  }
  return false;
}

function replaceIn(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string")
    return secrets.reduce((text, secret) => text.replaceAll(secret, REDACTED), value);
  if (Array.isArray(value)) return value.map((item) => replaceIn(item, secrets));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [replaceIn(key, secrets), replaceIn(item, secrets)]),
    );
  }
  return value;
}
