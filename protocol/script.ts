import { type Static, Type } from "@sinclair/typebox";
import { CONTEXT_STRATEGIES } from "./context.js";
import { StringEnum } from "./validation.js";

const strict = { additionalProperties: false } as const;

/**
 * The most tokens one count of a model call's usage is taken to be: far above any real call's, and
 * low enough that a turn's sums of them over its steps stay exact integers.
 */
export const MAX_TOKEN_COUNT = 2 ** 40;

const TokenCountSchema = Type.Integer({ minimum: 0, maximum: MAX_TOKEN_COUNT });
const ScriptedUsageSchema = Type.Object(
  { input_tokens: TokenCountSchema, output_tokens: TokenCountSchema },
  strict,
);

export const ScriptedToolCallSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    // any JSON, not only an object: a recorded model may have produced arguments that are not
    // an object (or not JSON at all), and a replay must give the tool the same thing
    arguments: Type.Unknown({ description: "The arguments as the model would give them." }),
  },
  strict,
);

/**
 * Parallel calls in one step that Brain sends at once: models ask for a handful, and a reply asking
 * for thousands (a broken model, or a script) would turn into as many requests.
 */
export const MAX_TOOL_CALLS_PER_STEP = 128;

export const ScriptedStepSchema = Type.Object(
  {
    text: Type.Optional(
      Type.String({
        description:
          "Assistant text. {{message}} is replaced by the turn's user message and {{result}} by the text of the last tool result.",
      }),
    ),
    tool_calls: Type.Optional(Type.Array(ScriptedToolCallSchema, { maxItems: MAX_TOOL_CALLS_PER_STEP })),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    error: Type.Optional(
      Type.String({ minLength: 1, description: "Fail this model call with this message." }),
    ),
    usage: Type.Optional(ScriptedUsageSchema),
    stop_reason: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The stop reason to report; "tool_use" when the step calls tools, else "end_turn".',
      }),
    ),
    compaction: Type.Optional(
      Type.Object(
        {
          strategy: StringEnum(CONTEXT_STRATEGIES),
          summary: Type.String(),
          through_seq: Type.Integer({ minimum: 0 }),
          usage: Type.Optional(ScriptedUsageSchema),
        },
        {
          ...strict,
          description:
            "A recorded compaction, made just before this step's model call exactly as recorded: a replay sends the model what the recorded session did.",
        },
      ),
    ),
  },
  { ...strict, description: "One model call of the scripted model." },
);

export const ScriptSchema = Type.Array(ScriptedStepSchema, { maxItems: 10_000 });

export type ScriptedStep = Static<typeof ScriptedStepSchema>;
export type ScriptedCompaction = NonNullable<ScriptedStep["compaction"]>;
