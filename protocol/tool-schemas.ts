import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// Tool authors write their schemas for other validators too, so unknown keywords are tolerated
// (strict: false), and both drafts that tool ecosystems use are understood.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;
const draft2020 = new Ajv2020({ strict: false, allErrors: false, validateSchema: true });
const draft07 = new Ajv({ strict: false, allErrors: false, validateSchema: true });
addFormats(draft2020);
addFormats(draft07);

export type ToolSchemaValidator = ValidateFunction;

/** Compile a tool's input or output schema; throws with Ajv's message when it does not compile. */
export function compileToolSchema(schema: Record<string, unknown>): ToolSchemaValidator {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  const ajv = /draft-0[4-7]/.test(dialect) ? draft07 : draft2020;
  // removeSchema keeps schemas with the same $id in two bindings from colliding
  if (typeof schema.$id === "string") ajv.removeSchema(schema.$id);
  return ajv.compile(schema);
}
