import { type Static, Type } from "@sinclair/typebox";

/**
 * What a tool service answers at `GET` of its base path (the tool list of docs/protocol.md): the
 * tools as Brain's `/catalog` lists them, plus the binding hints the author knows best. `brain
 * tools config` turns it into host-config bindings. Unknown fields are tolerated, so a newer
 * service can add some.
 */
export const ToolManifestSchema = Type.Object({
  tools: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1 }),
      description: Type.String({ minLength: 1 }),
      input_schema: Type.Record(Type.String(), Type.Unknown()),
      output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      /** The tool honours Idempotency-Key: the same key again gets the first result, nothing done twice. */
      idempotent: Type.Optional(Type.Boolean()),
    }),
  ),
});

export type ToolManifest = Static<typeof ToolManifestSchema>;
