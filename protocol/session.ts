import { type Static, Type } from "@sinclair/typebox";
import { ScriptSchema } from "./script.js";
import { TOOL_NAME_PATTERN } from "./tool-names.js";

/** How a person answers a call that waits for approval. */
export const APPROVAL_DECISIONS = ["approve", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

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
    max_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "The turn's budget: input and output tokens summed over its model calls.",
      }),
    ),
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
  max_tokens: Type.Optional(Type.Integer()),
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
/** What a message does while a turn runs: refused (409), queued for its own turn, or the turn interrupted. */
export const ON_BUSY = ["reject", "enqueue", "interrupt"] as const;

export const PostMessageBodySchema = Type.Object(
  {
    content: Type.String({ minLength: 1 }),
    on_busy: Type.Optional(StringEnum(ON_BUSY, { description: 'While a turn runs; "reject" when omitted.' })),
  },
  strict,
);
/** A message that started its turn gives its seq; one queued, its place in the queue. */
export const PostMessageAnswerSchema = Type.Union([
  Type.Object({ seq: Type.Integer() }),
  Type.Object({ queued: Type.Integer({ minimum: 1 }) }),
]);

/** A person's answer to a call that waits for approval. */
export const ApprovalBodySchema = Type.Object(
  {
    decision: StringEnum(APPROVAL_DECISIONS),
    reason: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  strict,
);
export const ApprovalAnswerSchema = Type.Object({
  call_id: Type.String(),
  decision: StringEnum(APPROVAL_DECISIONS),
});

export type SessionConfigInput = Static<typeof SessionConfigInputSchema>;
export type SessionConfig = Static<typeof SessionConfigSchema>;
export type SessionStatus = (typeof SessionStatuses)[number];
export type Session = Static<typeof SessionSchema>;
export type SessionList = Static<typeof SessionListSchema>;
export type CreateSessionBody = Static<typeof CreateSessionBodySchema>;
export type PostMessageBody = Static<typeof PostMessageBodySchema>;
export type PostMessageAnswer = Static<typeof PostMessageAnswerSchema>;
export type OnBusy = (typeof ON_BUSY)[number];
export type ApprovalBody = Static<typeof ApprovalBodySchema>;
