/**
 * The tool kit: write a tool service for Brain in TypeScript. Define tools with typed arguments,
 * serve them with bearer-token auth, JSON or event-stream answers, and error results for thrown
 * errors. It shares with Brain only the protocol (protocol/: the wire's schemas and codes) and the
 * plumbing of Node processes (runtime/), never Brain's server code. See kit/README.md.
 */
export { type ToolManifest, ToolManifestSchema } from "../protocol/manifest.js";
export type { ContentItem, ResultObject } from "../protocol/result.js";
export { normalizeFlags } from "../runtime/process.js";
export { bearerAuth, bearerToken, tokenFromEnv } from "./auth.js";
export { type HttpErrorCode, readJsonBody, sendError, sendJson, sendUnauthorized } from "./http.js";
export {
  type InspectedEvent,
  type InspectedSession,
  InspectionError,
  type SessionInspector,
} from "./inspection.js";
export { createServiceLogger } from "./logger.js";
export { manifestOf } from "./manifest.js";
export { errorResult, OutcomeUnknown, ToolError, textResult } from "./result.js";
export { type ExtraRoutes, type RunningService, type ServeOptions, serve } from "./service.js";
export {
  type ConfigResult,
  runServiceCommand,
  type ServiceCommand,
  type StoppableService,
  type SubcommandContext,
} from "./service-cli.js";
export { type ConfigResolver, envSecrets, loadServiceConfig } from "./service-config.js";
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolResultObject,
  type ToolReturn,
} from "./tool.js";
