import { type Static, type TObject, type TSchema, type TUnsafe, Type } from "@sinclair/typebox";
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { didYouMean } from "./did-you-mean.js";

// Ajv for our own wire shapes (host config, request bodies, events, tool results). Tool authors'
// schemas get their own instances (tool-schemas.ts), so a hostile input_schema cannot add keywords
// or formats to ours.
const ajv = new Ajv2020({
  allErrors: true,
  discriminator: true,
  strict: true,
  allowUnionTypes: true,
  verbose: true,
});
// the formats our shapes name: an event's `at` is a date-time
(addFormatsModule as unknown as (ajv: Ajv2020, formats: string[]) => void)(ajv, ["date-time"]);

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

export type Validator<T> = ValidateFunction<T>;

/** Compiled on first use, so a command that never validates a shape never pays for compiling it. */
export function compile<T>(schema: TSchema): Validator<T> {
  let compiled: ValidateFunction<T> | undefined;
  const validate = ((value: unknown) => {
    compiled ??= ajv.compile<T>(schema);
    const valid = compiled(value);
    validate.errors = compiled.errors;
    return valid;
  }) as Validator<T>;
  return validate;
}

/** "/tools/2/url" → "tools[2].url": the path a person reading the config would write. */
export function jsonPath(pointer: string, prefix = ""): string {
  let path = prefix;
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) path += path === "" ? part : `.${part}`;
    else path += `[${JSON.stringify(part)}]`;
  }
  return path;
}

function join(path: string, key: string): string {
  return jsonPath(`/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, path);
}

/** One line per problem, each naming its path; errors of the same path and kind are merged. */
export function describeErrors(errors: ErrorObject[] | null | undefined, prefix = ""): string[] {
  const lines: string[] = [];
  for (const error of errors ?? []) {
    const path = jsonPath(error.instancePath, prefix);
    let line: string;
    switch (error.keyword) {
      case "additionalProperties": {
        const field = String(error.params.additionalProperty);
        const known = Object.keys((error.parentSchema?.properties ?? {}) as Record<string, unknown>);
        line = `${join(path, field)}: unknown field${didYouMean(field, known)}`;
        break;
      }
      case "required":
        line = `${join(path, String(error.params.missingProperty))}: is required`;
        break;
      case "discriminator":
        line = `${join(path, String(error.params.tag))}: must be one of ${tagValues(error).join(", ")}`;
        break;
      case "minLength":
      case "minItems":
        line = `${path || "(root)"}: ${error.params.limit === 1 ? "must not be empty" : error.message}`;
        break;
      case "const":
        line = `${path || "(root)"}: must be ${JSON.stringify(error.params.allowedValue)}`;
        break;
      case "enum":
        line = `${path || "(root)"}: must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
        break;
      case "anyOf":
      case "oneOf":
        // the branches' own errors say what is wrong; the summary adds nothing
        continue;
      default:
        line = `${path || "(root)"}: ${error.message ?? "is invalid"}`;
    }
    if (!lines.includes(line)) lines.push(line);
  }
  return lines;
}

function tagValues(error: ErrorObject): string[] {
  const tag = String(error.params.tag);
  const variants = (error.parentSchema?.oneOf ?? []) as {
    properties?: Record<string, { const?: unknown }>;
  }[];
  return variants.map((variant) => JSON.stringify(variant.properties?.[tag]?.const));
}

/** Validate `value` and return either the typed value or the problem lines. */
export function check<T>(
  validate: Validator<T>,
  value: unknown,
  prefix = "",
): { ok: true; value: T } | { ok: false; problems: string[] } {
  if (validate(value)) return { ok: true, value };
  return { ok: false, problems: describeErrors(validate.errors, prefix) };
}
