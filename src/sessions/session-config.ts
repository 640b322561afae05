import { type Static, Type } from "@sinclair/typebox";
import { ScriptSchema, TOOL_NAME_PATTERN } from "../config/schema.js";

const strict = { additionalProperties: false } as const;

export const SessionConfigSchema = Type.Object(
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
    script: Type.Optional(
      Type.Array(ScriptSchema.items, {
        maxItems: ScriptSchema.maxItems,
        description: 'Steps for a model whose provider is "scripted"; refused for any other model.',
      }),
    ),
  },
  strict,
);

export const CreateSessionBodySchema = Type.Object({ config: Type.Optional(SessionConfigSchema) }, strict);
export const PostMessageBodySchema = Type.Object({ content: Type.String({ minLength: 1 }) }, strict);

export type SessionConfigInput = Static<typeof SessionConfigSchema>;
export type CreateSessionBody = Static<typeof CreateSessionBodySchema>;
export type PostMessageBody = Static<typeof PostMessageBodySchema>;

/** The config as stored: every default filled in, so a session behaves the same after a config reload. */
export interface SessionConfig {
  model: string;
  system?: string;
  tools: string[];
  max_steps: number;
  metadata: Record<string, unknown>;
  script?: SessionConfigInput["script"];
}

export const SessionStatuses = ["idle", "running", "closed"] as const;
export type SessionStatus = (typeof SessionStatuses)[number];

export interface SessionRecord {
  id: string;
  tenant_id: string;
  status: SessionStatus;
  config: SessionConfig;
  created_at: string;
}
