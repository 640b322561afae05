import type { ErrorObject, ValidateFunction } from "ajv";
import { didYouMean } from "./did-you-mean.js";

// What a validator found, as lines a person reads. Apart from validation.ts, which holds Ajv
// itself: a browser bundle that links precompiled validators (web/build-console.ts) needs these
// and not the compiler.

export type Validator<T> = ValidateFunction<T>;

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

/**
 * One line per problem, each naming its path; errors of the same path and kind are merged. At most
 * `max` lines: what a peer sent may hold a hundred thousand problems, and nobody reads past a few.
 */
export function describeErrors(
  errors: ErrorObject[] | null | undefined,
  prefix = "",
  max = Number.POSITIVE_INFINITY,
): string[] {
  const lines = new Set<string>();
  for (const error of errors ?? []) {
    if (lines.size >= max) break;
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
    lines.add(line);
  }
  return [...lines];
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
