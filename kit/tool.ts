import type { Static, TSchema } from "@sinclair/typebox";
import type { Logger } from "pino";
import type { ContentItem } from "../protocol/result.js";
import { TOOL_NAME_PATTERN } from "../protocol/tool-names.js";
import { compileToolSchema, type ToolSchemaValidator } from "../protocol/tool-schemas.js";
import type { SessionInspector } from "./inspection.js";

/** What a handler learns about the call besides its arguments. */
export interface ToolContext {
  /** From the authenticated session, never from the model: authorize with these. */
  readonly tenant_id: string;
  readonly session_id: string;
  /** Brain's id for this call, as in its `tool.call` event: log it to match the two. */
  readonly call_id: string;
  /**
   * The request's `Idempotency-Key` (Brain sends the call id): a call that reaches the service
   * again with the same key is the same call. Key your side effects on it (a payment's key, say).
   */
  readonly idempotency_key: string;
  /** Fires when Brain closes the connection (the session was interrupted or closed) or the service stops. */
  readonly signal: AbortSignal;
  /**
   * Send a progress event (any JSON value) that Brain forwards live to the session's clients. In a
   * tool that is not `streaming`, the first call switches the answer to an event stream.
   */
  progress(data: unknown): void;
  /** Reads this session from Brain; present only when the binding sets `inspect_session`. */
  readonly inspection: SessionInspector | undefined;
  /** The service's logger, bound to this call. Never log tokens. */
  readonly log: Logger;
}

/** A result object of the protocol; `structured_content` is typed by the tool's output schema. */
export interface ToolResultObject<S = Record<string, unknown>> {
  content?: ContentItem[];
  structured_content?: S;
  is_error?: boolean;
}

/** A handler returns a result object, or a string as shorthand for one text item. */
export type ToolReturn<S = Record<string, unknown>> = string | ToolResultObject<S>;

type StructuredOf<O> = O extends TSchema ? Static<O> : Record<string, unknown>;

export interface ToolDefinition<I extends TSchema, O extends TSchema | undefined = undefined> {
  /** `^[a-zA-Z0-9_-]{1,64}$`; the tool answers at `{basePath}/{name}`. */
  name: string;
  description: string;
  /** A TypeBox schema (root `type: object`): the binding's `input_schema` and the handler's argument type. */
  input: I;
  /** Optional: the binding's `output_schema`; success results' `structured_content` is checked against it. */
  output?: O;
  /**
   * Answer with an event stream whose headers go out at once, with keep-alive comments while the
   * handler works: for work that may outlast Brain's headers timeout (30 s by default).
   */
  streaming?: boolean;
  /**
   * How long a call may take, as a hint for the binding's `timeout_seconds` (`brain tools config`
   * writes it); Brain's default is 300.
   */
  timeoutSeconds?: number;
  /**
   * Honour `Idempotency-Key`: a call that comes again with the same key (from the same tenant,
   * within a day, to this process) gets the first call's result without the handler running again;
   * the same key with other arguments is refused (400). The tool list says so (`idempotent`), and
   * `brain tools check` then checks it.
   */
  idempotent?: boolean;
  /** A thrown error becomes an `is_error` result whose text is the error's message. */
  handler: (
    args: Static<I>,
    ctx: ToolContext,
  ) => ToolReturn<StructuredOf<O>> | Promise<ToolReturn<StructuredOf<O>>>;
}

/** A defined tool: its schemas compiled once, ready to serve. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema: Record<string, unknown> | undefined;
  readonly streaming: boolean;
  readonly timeoutSeconds: number | undefined;
  readonly idempotent: boolean;
  readonly validateArguments: ToolSchemaValidator;
  readonly validateOutput: ToolSchemaValidator | undefined;
  readonly handler: (args: unknown, ctx: ToolContext) => ToolReturn<unknown> | Promise<ToolReturn<unknown>>;
}

const namePattern = new RegExp(TOOL_NAME_PATTERN);

/** TypeBox marks its schemas with symbol keys; a JSON copy is the schema as it goes on the wire. */
function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** Define a tool. Throws on a bad name or a schema that does not compile, so mistakes show at start. */
export function defineTool<I extends TSchema, O extends TSchema | undefined = undefined>(
  definition: ToolDefinition<I, O>,
): Tool {
  if (!namePattern.test(definition.name)) {
    throw new Error(`tool name "${definition.name}" must match ${TOOL_NAME_PATTERN}`);
  }
  if (definition.description.trim() === "") throw new Error(`tool "${definition.name}" needs a description`);
  const inputSchema = plainSchema(definition.input);
  if (inputSchema.type !== "object") {
    throw new Error(`tool "${definition.name}": the input schema's root must be "type": "object"`);
  }
  const outputSchema = definition.output === undefined ? undefined : plainSchema(definition.output);
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    outputSchema,
    streaming: definition.streaming ?? false,
    timeoutSeconds: definition.timeoutSeconds,
    idempotent: definition.idempotent ?? false,
    validateArguments: compileToolSchema(inputSchema),
    validateOutput: outputSchema === undefined ? undefined : compileToolSchema(outputSchema),
    handler: definition.handler as Tool["handler"],
  };
}
