import { type Static, Type } from "@sinclair/typebox";

/** A tool as the catalog shows it to a tenant: never where it runs or how it is reached. */
export const CatalogToolSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
  output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const CatalogSchema = Type.Object({ tools: Type.Array(CatalogToolSchema) });

export type CatalogTool = Static<typeof CatalogToolSchema>;
export type Catalog = Static<typeof CatalogSchema>;
