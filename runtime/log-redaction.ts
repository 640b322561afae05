/**
 * The endings of field names whose values are secrets wherever they sit in a logged object: header
 * names (`authorization`, `proxy-authorization`, `cookie`, `set-cookie`, `x-api-key`,
 * `x-subscription-token`) and config or body fields (`token`, `inspection_token`, `api_key`,
 * `apiKey`, `client_secret`, `password`, `secretAccessKey`, `sessionToken`) alike. A name matches
 * when it ends with an entry, in any case, with `_` standing for `-`, `_` or nothing.
 */
export const SECRET_FIELDS = [
  "authorization",
  "cookie",
  "api_key",
  "token",
  "secret",
  "password",
  "passphrase",
  "secret_access_key",
  "private_key",
] as const;

export const REDACTED = "[redacted]";
/** Past the bounds nothing was checked for secrets, so nothing of it is logged. */
export const UNCHECKED = "[not logged: too deep or too large to check for secrets]";
const CIRCULAR = "[Circular]";

/** Levels below a log line's top; an SDK error's body sits about four down. */
const MAX_DEPTH = 10;
/** Objects looked into per log line; a line of Brain's holds a handful. */
const MAX_OBJECTS = 1_000;

const SECRET_FIELD = new RegExp(
  `(?:${SECRET_FIELDS.map((entry) => entry.replaceAll("_", "[-_]?")).join("|")})$`,
  "i",
);

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/** The walk of one log line: a result for every object seen, and OPEN for those still being walked. */
const OPEN = Symbol("open");
interface Walk {
  root: object;
  results: Map<object, unknown> | undefined;
  budget: number;
}

/**
 * `fields` with the value of every secret field replaced by REDACTED, at any depth, in what the
 * line's JSON will hold: own and inherited enumerable properties, array items, and the errors of
 * an AggregateError (pino's error serializer reads all three). Objects that serialize themselves
 * (`toJSON`: Secret, Date, URL, Buffer) are left to do so. Nothing is changed in place: what holds a
 * secret is copied with its prototype, so an error stays an error of its class, and the rest is
 * shared. Past MAX_DEPTH or MAX_OBJECTS an object is logged as UNCHECKED. Pure.
 */
export function redactSecretFields<T extends object>(fields: T): T {
  try {
    return redacted(fields, 0, { root: fields, results: undefined, budget: MAX_OBJECTS }) as T;
  } catch {
    // a getter threw: what it guarded cannot be checked, so none of the line's fields is logged
    return { fields: UNCHECKED } as T;
  }
}

/**
 * pino options every Brain process logs with: JSON lines named by service, secret fields redacted.
 * pino formats a child logger's bindings without the root's formatters, once, when the child is
 * made; its redact paths do reach them, so those name the secret fields at the top level, as
 * bindings are (they bind ids, never secrets).
 */
export function logOptions(service: string, level: string) {
  return {
    level,
    base: { service },
    formatters: { log: (fields: Record<string, unknown>) => redactSecretFields(fields) },
    redact: { paths: [...SECRET_FIELDS, "inspection_token"], censor: REDACTED },
  };
}

function redacted(value: unknown, depth: number, walk: Walk): unknown {
  if (typeof value !== "object" || value === null || !walkable(value)) return value;
  if (depth > 0) {
    // most lines hold no object below the top: the map is made for the first that does
    walk.results ??= new Map<object, unknown>([[walk.root, OPEN]]);
    const seen = walk.results.get(value);
    // a cycle is cut: left whole, it would lead back to the object before its secrets were replaced
    if (seen === OPEN) return CIRCULAR;
    if (seen !== undefined) return seen;
    if (depth > MAX_DEPTH || --walk.budget < 0) return UNCHECKED;
    walk.results.set(value, OPEN);
  }
  const result = Array.isArray(value)
    ? redactedItems(value, depth, walk)
    : redactedFields(value, depth, walk);
  walk.results?.set(value, result);
  return result;
}

function redactedItems(items: unknown[], depth: number, walk: Walk): unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const out = redacted(item, depth + 1, walk);
    if (out !== item) {
      copy ??= items.slice();
      copy[index] = out;
    }
  }
  return copy ?? items;
}

function redactedFields(object: object, depth: number, walk: Walk): object {
  const fields = object as Record<string, unknown>;
  let copy: object | undefined;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined || value === null) continue;
    const out = isSecretField(key) ? REDACTED : redacted(value, depth + 1, walk);
    if (out !== value) copy = withField(copy ?? copyOf(object), object, key, out);
  }
  // an AggregateError's errors are not enumerable, yet pino logs each
  if (
    object instanceof Error &&
    Array.isArray(fields.errors) &&
    !Object.prototype.propertyIsEnumerable.call(object, "errors")
  ) {
    const out = redacted(fields.errors, depth + 1, walk);
    if (out !== fields.errors) copy = withField(copy ?? copyOf(object), object, "errors", out);
  }
  return copy ?? object;
}

function copyOf(object: object): object {
  return Object.create(Object.getPrototypeOf(object), Object.getOwnPropertyDescriptors(object));
}

/** `copy` with `key` set to `value`, enumerable as it was on `original` (so pino logs it as it would have). */
function withField(copy: object, original: object, key: string, value: unknown): object {
  const enumerable = Object.getOwnPropertyDescriptor(original, key)?.enumerable ?? true;
  Object.defineProperty(copy, key, { value, enumerable, writable: true, configurable: true });
  return copy;
}

/** Whether the line's JSON holds this object's own fields, rather than what it serializes itself as. */
function walkable(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON !== "function" && !ArrayBuffer.isView(value);
}
