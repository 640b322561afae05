import { type Static, Type } from "@sinclair/typebox";
import { ScriptSchema } from "./script.js";
import { TOOL_NAME_PATTERN } from "./tool-names.js";
import { StringEnum } from "./validation.js";

const strict = { additionalProperties: false } as const;

const scriptOfSession = Type.Array(ScriptSchema.items, {
  maxItems: ScriptSchema.maxItems,
  description: 'Steps for a model whose provider is "scripted"; refused for any other model.',
});

/** A session's config as a client sends it: every field may be left to its default. */
export const SessionConfigInputSchema = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A model name from the host config; "default" when omitted.',
      }),
    ),
    system: Type.Optional(Type.String({ maxLength: 262_144 })),
    tools: Type.Optional(
      Type.Array(Type.String({ pattern: TOOL_NAME_PATTERN }), { uniqueItems: true, maxItems: 256 }),
    ),
    max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    script: Type.Optional(scriptOfSession),
  },
  strict,
);

/** The config as stored: every default filled in, so a session behaves the same after a config reload. */
export const SessionConfigSchema = Type.Object({
  model: Type.String(),
  system: Type.Optional(Type.String()),
  tools: Type.Array(Type.String()),
  max_steps: Type.Integer(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  script: Type.Optional(scriptOfSession),
});

export const SessionStatuses = ["idle", "running", "closed"] as const;

export const SessionSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(SessionStatuses),
  config: SessionConfigSchema,
  created_at: Type.String({ format: "date-time" }),
});

export const SessionListSchema = Type.Object({
  sessions: Type.Array(SessionSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const CreateSessionBodySchema = Type.Object(
  { config: Type.Optional(SessionConfigInputSchema) },
  strict,
);
export const PostMessageBodySchema = Type.Object({ content: Type.String({ minLength: 1 }) }, strict);
export const PostMessageAnswerSchema = Type.Object({ seq: Type.Integer() });

export type SessionConfigInput = Static<typeof SessionConfigInputSchema>;
export type SessionConfig = Static<typeof SessionConfigSchema>;
export type SessionStatus = (typeof SessionStatuses)[number];
export type Session = Static<typeof SessionSchema>;
export type SessionList = Static<typeof SessionListSchema>;
export type CreateSessionBody = Static<typeof CreateSessionBodySchema>;
export type PostMessageBody = Static<typeof PostMessageBodySchema>;
