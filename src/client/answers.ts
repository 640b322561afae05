import { type Static, Type } from "@sinclair/typebox";
import { CatalogSchema } from "../../protocol/catalog.js";
import { ErrorResponseSchema } from "../../protocol/errors.js";
import { SessionEventSchema } from "../../protocol/events.js";
import {
  ApprovalAnswerSchema,
  PostMessageAnswerSchema,
  SessionListSchema,
  SessionSchema,
} from "../../protocol/session.js";
import { compile, type Validator } from "../../protocol/validation.js";

/** The schema of each answer the client reads: every answer is checked before a caller sees it. */
export const ANSWER_SCHEMAS = {
  catalog: CatalogSchema,
  session: SessionSchema,
  sessionList: SessionListSchema,
  posted: PostMessageAnswerSchema,
  approval: ApprovalAnswerSchema,
  /** A page of stored events: each is checked as an `event` (one validator for both keeps the console's bundle half the size). */
  eventPage: Type.Object({ events: Type.Array(Type.Unknown()) }),
  event: SessionEventSchema,
  error: ErrorResponseSchema,
};

export type Answers = {
  [K in keyof typeof ANSWER_SCHEMAS]: Validator<Static<(typeof ANSWER_SCHEMAS)[K]>>;
};

/**
 * Compiled by Ajv on first use. The console's browser bundle links this module's precompiled twin
 * instead (web/build-console.ts): Ajv compiles with `new Function`, which a page under a strict
 * Content-Security-Policy may not run.
 */
export const answers = Object.fromEntries(
  Object.entries(ANSWER_SCHEMAS).map(([name, schema]) => [name, compile(schema)]),
) as Answers;
