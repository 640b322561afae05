import { type Static, Type } from "@sinclair/typebox";
import { CONTEXT_STRATEGIES } from "../../protocol/context.js";
import { ScriptSchema } from "../../protocol/script.js";
import { TOOL_NAME_PATTERN } from "../../protocol/tool-names.js";
import { defaultsOf, StringEnum, TaggedUnion } from "../../protocol/validation.js";

// One schema per wire shape: the JSON Schema published in schema/brain.schema.json and the
// TypeScript types below are both derived from these definitions, so they cannot disagree.

const strict = { additionalProperties: false } as const;

const ENV_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";

const EnvName = Type.String({ pattern: ENV_NAME_PATTERN, description: "Name of an environment variable." });
const Id = Type.String({ pattern: "^[a-zA-Z0-9_.-]{1,64}$" });

const ContextSchema = Type.Object(
  {
    threshold: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        default: 0.8,
        description:
          "The share of context_window a model call may fill (with max_tokens for the answer); past it, the conversation is compacted first.",
      }),
    ),
    strategy: Type.Optional(
      StringEnum(CONTEXT_STRATEGIES, {
        default: "compact",
        description:
          '"compact": the model summarises the oldest turns; "truncate": the oldest whole turns are left out, with no model call.',
      }),
    ),
    compaction_model: Type.Optional(
      Type.String({
        pattern: "^[a-zA-Z0-9_.-]{1,64}$",
        description: "The model entry that writes summaries; this one by default.",
      }),
    ),
  },
  strict,
);

/** What every model entry may say about its context window. */
const contextFields = {
  context_window: Type.Optional(
    Type.Integer({
      minimum: 256,
      maximum: 100_000_000,
      description:
        "The model's context window in tokens; known for the providers' current models, required for others (and for base_url servers). The scripted model has none unless set.",
    }),
  ),
  max_output_tokens: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000_000,
      description:
        "The longest answer the model can give, in tokens; known for the providers' current models.",
    }),
  ),
  context: Type.Optional(ContextSchema),
};

const providerModelFields = {
  ...contextFields,
  name: Id,
  model: Type.String({ minLength: 1 }),
  api_key_env: Type.Optional(
    Type.String({
      pattern: ENV_NAME_PATTERN,
      description: "The environment variable holding the API key; required without base_url.",
    }),
  ),
  base_url: Type.Optional(
    Type.String({ minLength: 1, description: "The API's base URL; the provider's public API by default." }),
  ),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  timeout_seconds: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 3600,
      default: 600,
      description: "The longest wait for the response to start, and between two streamed events.",
    }),
  ),
  max_retries: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10,
      default: 2,
      description:
        "Retries of a model call after 408, 409, 429, 5xx, overloaded, timeout or connection errors.",
    }),
  ),
  max_retry_wait_seconds: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 3600,
      default: 60,
      description: "The longest wait before one retry; a longer retry-after ends the turn instead.",
    }),
  ),
};

export const ModelSchema = TaggedUnion("provider", [
  // each API's own temperature range
  Type.Object(
    {
      ...providerModelFields,
      provider: Type.Literal("anthropic"),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    },
    strict,
  ),
  Type.Object(
    {
      ...providerModelFields,
      provider: Type.Literal("openai"),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      image_input: Type.Optional(
        Type.Boolean({
          description:
            "Whether the model takes images: a tool's images then follow its results as image parts, else the model reads a note. Default: true for OpenAI's API, false with another base_url.",
        }),
      ),
    },
    strict,
  ),
  Type.Object(
    { name: Id, provider: Type.Literal("scripted"), script: Type.Optional(ScriptSchema), ...contextFields },
    strict,
  ),
]);

/**
 * The most a binding may let a result be: 256 MiB. A result is stored and sent as one string, and
 * V8 cannot make a string of more than 512 MiB, so a larger one would fail its call on Brain's side.
 */
const MAX_RESULT_BYTES = 268_435_456;

export const ToolBindingSchema = Type.Object(
  {
    name: Type.String({ pattern: TOOL_NAME_PATTERN }),
    description: Type.String({ minLength: 1 }),
    input_schema: Type.Record(Type.String(), Type.Unknown(), {
      description: 'A JSON Schema (draft 2020-12 or draft-07) whose root is "type": "object".',
    }),
    output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    url: Type.String({
      minLength: 1,
      description: "Absolute http or https URL, without user info or fragment.",
    }),
    token_env: Type.Optional(EnvName),
    tenants: Type.Array(Id, { minItems: 1, uniqueItems: true }),
    timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86_400, default: 300 })),
    max_output_bytes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RESULT_BYTES,
        default: 1_048_576,
        description: "How much of a response Brain reads, at most: more is the call's output_too_large.",
      }),
    ),
    max_model_bytes: Type.Optional(
      Type.Integer({
        minimum: 256,
        maximum: MAX_RESULT_BYTES,
        default: 65_536,
        description:
          "What the model is sent of one result, at most: the rest is left out with a note (the stored tool.result stays whole).",
      }),
    ),
    inspect_session: Type.Optional(Type.Boolean({ default: false })),
    approval: Type.Optional(
      StringEnum(["never", "always"], {
        default: "never",
        description: '"always": every call waits for a person to approve it before it is sent.',
      }),
    ),
  },
  strict,
);

export const LimitsSchema = Type.Object(
  {
    tool_headers_timeout_seconds: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 3600, default: 30 }),
    ),
    max_steps_per_turn: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 32 })),
    max_request_bytes: Type.Optional(
      Type.Integer({ minimum: 1024, maximum: 67_108_864, default: 1_048_576 }),
    ),
    max_progress_bytes: Type.Optional(Type.Integer({ minimum: 64, maximum: 1_048_576, default: 65_536 })),
    request_timeout_seconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 3600,
        default: 30,
        description: "How long a client may take to send a whole request (headers and body); past it, 408.",
      }),
    ),
    approval_timeout_seconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 2_592_000,
        default: 3600,
        description: "How long a call waits for approval; unanswered, it ends approval_expired.",
      }),
    ),
    max_queued_messages: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        default: 100,
        description: 'Messages a session holds (on_busy "enqueue") while a turn runs.',
      }),
    ),
    max_tokens_per_turn: Type.Optional(
      Type.Integer({
        minimum: 0,
        default: 0,
        description: "A turn's budget of input and output tokens over its model calls; 0 for none.",
      }),
    ),
  },
  strict,
);

export const SqliteStoreSchema = Type.Object(
  {
    kind: Type.Literal("sqlite"),
    path: Type.Optional(Type.String({ minLength: 1, default: "./data/brain.db" })),
  },
  strict,
);

export const PostgresStoreSchema = Type.Object(
  {
    kind: Type.Literal("postgres"),
    url_env: Type.String({
      pattern: ENV_NAME_PATTERN,
      description: "Name of the environment variable holding the postgres:// URL (it may hold a password).",
    }),
    lease_seconds: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 300,
        default: 10,
        description:
          "How long a turn's owner holds it without renewing: a dead owner's turns are taken over after this.",
      }),
    ),
    pool_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 10 })),
  },
  strict,
);

export const StoreSchema = TaggedUnion("kind", [SqliteStoreSchema, PostgresStoreSchema]);

export const HostConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    listen: Type.Optional(
      Type.String({ default: "127.0.0.1:8080", description: "host:port to bind; loopback by default." }),
    ),
    public_url: Type.Optional(Type.String({ description: "The URL tool services use to reach Brain." })),
    log_level: Type.Optional(
      StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
    ),
    store: Type.Optional(StoreSchema),
    tenants: Type.Array(
      Type.Object(
        {
          id: Id,
          api_key_env: EnvName,
          max_concurrent_turns: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: "Turns this tenant's sessions may run at once; past it, 429.",
            }),
          ),
          max_event_streams: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                "Event streams (SSE) this tenant's clients may hold open at once on one Brain process; past it, 429.",
            }),
          ),
          requests_per_second: Type.Optional(
            Type.Number({
              exclusiveMinimum: 0,
              description: "Requests this tenant may make per second (bursts of twice that); past it, 429.",
            }),
          ),
        },
        strict,
      ),
      { minItems: 1 },
    ),
    models: Type.Array(ModelSchema, { minItems: 1 }),
    tools: Type.Optional(Type.Array(ToolBindingSchema)),
    limits: Type.Optional(LimitsSchema),
    telemetry: Type.Optional(
      Type.Object(
        {
          otlp_endpoint: Type.Optional(
            Type.String({
              minLength: 1,
              description:
                "The OTLP/HTTP base URL traces are exported to (…/v1/traces is added), as OTEL_EXPORTER_OTLP_ENDPOINT, which wins over it. Traces are off without either.",
            }),
          ),
        },
        strict,
      ),
    ),
  },
  {
    ...strict,
    $id: "https://brain.dev/schema/brain.schema.json",
    title: "Brain host config",
  },
);

export type HostConfig = Static<typeof HostConfigSchema>;
export type ModelEntry = Static<typeof ModelSchema>;
export type ToolBindingConfig = Static<typeof ToolBindingSchema>;
export type Limits = Required<Static<typeof LimitsSchema>>;

export const DEFAULT_LIMITS: Limits = defaultsOf(LimitsSchema);
// a binding's optional fields take their defaults from the schema, where the published schema shows them
export const DEFAULT_TOOL_TIMEOUT_SECONDS: number = ToolBindingSchema.properties.timeout_seconds.default;
export const DEFAULT_MAX_OUTPUT_BYTES: number = ToolBindingSchema.properties.max_output_bytes.default;
export const DEFAULT_MAX_MODEL_BYTES: number = ToolBindingSchema.properties.max_model_bytes.default;
export type ContextConfig = Static<typeof ContextSchema>;
export const DEFAULT_CONTEXT_THRESHOLD: number = ContextSchema.properties.threshold.default;
export const DEFAULT_INSPECT_SESSION: boolean = ToolBindingSchema.properties.inspect_session.default;
