import { type Static, Type } from "@sinclair/typebox";
import type { ErrorObject } from "ajv";
import { compile, describeErrors, TaggedUnion } from "./validation.js";

const strict = { additionalProperties: false } as const;

/**
 * Told apart by `type`: only the matching branch is checked. As a plain union every item was
 * checked against all four and the three it is not made error objects to throw away, 120 ns and
 * 1 KB of a call's (BENCHMARKS.md); and a wrong item now gets its own problems, not every branch's.
 */
export const ContentItemSchema = TaggedUnion("type", [
  Type.Object({ type: Type.Literal("text"), text: Type.String() }, strict),
  Type.Object({ type: Type.Literal("image"), data: Type.String(), mime_type: Type.String() }, strict),
  Type.Object({ type: Type.Literal("audio"), data: Type.String(), mime_type: Type.String() }, strict),
  Type.Object(
    {
      type: Type.Literal("resource_link"),
      uri: Type.String(),
      name: Type.Optional(Type.String()),
      mime_type: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
    },
    strict,
  ),
]);

/** The result object a tool service sends ([docs/protocol.md](../docs/protocol.md#the-result-object)). */
export const ResultObjectSchema = Type.Object(
  {
    content: Type.Optional(Type.Array(ContentItemSchema)),
    structured_content: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    is_error: Type.Optional(Type.Boolean()),
  },
  strict,
);

export type ContentItem = Static<typeof ContentItemSchema>;
export type ResultObject = Static<typeof ResultObjectSchema>;

/** Why a Brain-made result or a failed turn ended: a stable code and a message for people. */
export const ErrorInfoSchema = Type.Object({ code: Type.String(), message: Type.String() });

/** A call's result as recorded in `tool.result`: the service's, or one Brain made for a failure. */
export const ToolResultSchema = Type.Object({
  is_error: Type.Boolean(),
  content: Type.Array(ContentItemSchema),
  structured_content: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  unknown_outcome: Type.Optional(Type.Boolean()),
  error: Type.Optional(ErrorInfoSchema),
});

export type ToolResult = Static<typeof ToolResultSchema>;

export const validateResultObject = compile<ResultObject>(ResultObjectSchema, { firstError: true });

/** Judge a parsed result object against the protocol and the binding's output schema. */
export function checkResultObject(
  raw: unknown,
  validateOutput: ((value: unknown) => boolean) | undefined,
): ToolResult | { problem: string } {
  if (!validateResultObject(raw)) {
    return {
      problem: `the result object is invalid: ${describeErrors(validateResultObject.errors, "result", 5).join("; ")}`,
    };
  }
  if (raw.content === undefined && raw.structured_content === undefined) {
    return { problem: "the result object has neither content nor structured_content" };
  }
  const isError = raw.is_error === true;
  if (!isError && validateOutput) {
    if (raw.structured_content === undefined) {
      return { problem: "the tool declares an output_schema but its result has no structured_content" };
    }
    if (!validateOutput(raw.structured_content)) {
      const errors = (validateOutput as { errors?: ErrorObject[] | null }).errors;
      return {
        problem: `structured_content does not match output_schema: ${describeErrors(errors, "structured_content", 5).join("; ")}`,
      };
    }
  }
  const result: ToolResult = { is_error: isError, content: raw.content ?? [] };
  if (raw.structured_content !== undefined) result.structured_content = raw.structured_content;
  return result;
}
