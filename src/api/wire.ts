import { Type } from "@sinclair/typebox";
import { SessionStatuses } from "../sessions/session-config.js";
import { StringEnum } from "../validation.js";

// Response shapes, for the OpenAPI document and the typed client.

export const ErrorResponseSchema = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});

export const SessionSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(SessionStatuses),
  config: Type.Object({
    model: Type.String(),
    system: Type.Optional(Type.String()),
    tools: Type.Array(Type.String()),
    max_steps: Type.Integer(),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    script: Type.Optional(Type.Array(Type.Unknown())),
  }),
  created_at: Type.String({ format: "date-time" }),
});

export const SessionListSchema = Type.Object({
  sessions: Type.Array(SessionSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const EventSchema = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  type: Type.String(),
  at: Type.String({ format: "date-time" }),
  data: Type.Record(Type.String(), Type.Unknown()),
});

export const EventListSchema = Type.Object({ events: Type.Array(EventSchema) });

export const CatalogSchema = Type.Object({
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      input_schema: Type.Record(Type.String(), Type.Unknown()),
      output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
});
