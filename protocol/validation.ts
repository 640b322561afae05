import { type Static, type TObject, type TSchema, type TUnsafe, Type } from "@sinclair/typebox";
import type { CodeOptions, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Validator } from "./problems.js";

// Ajv for our own wire shapes (host config, request bodies, events, tool results). Tool authors'
// schemas get their own instances (tool-schemas.ts), so a hostile input_schema cannot add keywords
// or formats to ours.
/**
 * An Ajv as our wire shapes need it. `code` is for a build that emits the validators as source
 * (Ajv's standalone code), for a page whose Content-Security-Policy forbids compiling them there.
 * `validateSchema: false` skips checking each schema against JSON Schema's meta-schema, and so
 * compiling the meta-schema itself at the instance's first schema (about 60 ms).
 */
export function protocolAjv(
  options: { code?: CodeOptions; allErrors?: boolean; validateSchema?: boolean } = {},
): Ajv2020 {
  const { code, allErrors = true, validateSchema = true } = options;
  const ajv = new Ajv2020({
    allErrors,
    validateSchema,
    discriminator: true,
    strict: true,
    allowUnionTypes: true,
    verbose: true,
    ...(code && { code }),
  });
  // the formats our shapes name: an event's `at` is a date-time
  (addFormatsModule as unknown as (ajv: Ajv2020, formats: string[]) => void)(ajv, ["date-time"]);
  return ajv;
}

const ajv = protocolAjv();
/**
 * For what a peer sends, a tool's result: it stops at the first problem, so that a result of a
 * hundred thousand wrong items costs what one does to refuse (with every error, 88,000 of them
 * took Ajv 77 ms). Its first schema is compiled at a Brain's first tool call, which would pay for
 * the meta-schema too: its schemas are checked against it by a test instead
 * (validation.test.ts).
 */
let firstErrorAjv: Ajv2020 | undefined;

function firstErrorInstance(): Ajv2020 {
  firstErrorAjv ??= protocolAjv({ allErrors: false, validateSchema: false });
  return firstErrorAjv;
}

/** A string enum as plain JSON Schema `enum`, which gives one clear error instead of one per branch. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/**
 * A union told apart by one string field, as Ajv's `discriminator`: only the matching branch reports
 * errors, so a wrong entry gets its own problems instead of every branch's.
 */
export function TaggedUnion<T extends TSchema[]>(tag: string, variants: [...T]): TUnsafe<Static<T[number]>> {
  return Type.Unsafe<Static<T[number]>>({
    type: "object",
    discriminator: { propertyName: tag },
    oneOf: variants,
  });
}

/**
 * The `default` of each property of an object schema, so a default value is written once, where
 * the published schema shows it. Every property must have one.
 */
export function defaultsOf<T extends TObject>(schema: T): Required<Static<T>> {
  const defaults: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    if (property.default === undefined) throw new Error(`defaultsOf: ${key} has no default`);
    defaults[key] = property.default;
  }
  return defaults as Required<Static<T>>;
}

/**
 * Compiled on first use, so a command that never validates a shape never pays for compiling it
 * (a server compiles what its requests need as it starts: `compileNow`). With `firstError`, the
 * validator reports only the first problem it meets.
 */
export function compile<T>(schema: TSchema, options: { firstError?: boolean } = {}): Validator<T> {
  let compiled: ValidateFunction<T> | undefined;
  const validate = ((value: unknown) => {
    compiled ??= (options.firstError ? firstErrorInstance() : ajv).compile<T>(schema);
    const valid = compiled(value);
    validate.errors = compiled.errors;
    return valid;
  }) as Validator<T>;
  return validate;
}

/**
 * Compiles validators made by `compile` now, rather than at their first use: for a server, before
 * it listens, so that its first request or tool call does not wait for Ajv (tens of ms each).
 */
export function compileNow(...validators: ((value: unknown) => boolean)[]): void {
  // a validator compiles at its first call; what it says of `undefined` is not kept
  for (const validate of validators) validate(undefined);
}

export { check, describeErrors, jsonPath, type Validator } from "./problems.js";
