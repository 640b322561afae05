/**
 * Brain's client, as `brain/client`: a typed client for Brain's HTTP API that runs in Node and in
 * browsers (fetch only), the event types it yields, and a one-line form of an event for terminals.
 * It imports the protocol and nothing of Brain's server.
 */

export type { Catalog, CatalogTool } from "../../protocol/catalog.js";
export type {
  EventData,
  EventType,
  LiveEvent,
  SessionEvent,
  StoredEvent,
  ToolResultEventData,
} from "../../protocol/events.js";
export type { Session, SessionConfigInput, SessionList, SessionStatus } from "../../protocol/session.js";
export {
  BrainClient,
  type BrainClientOptions,
  type RequestOptions,
  type StreamOptions,
  type StreamStatus,
} from "./client.js";
export { BrainApiError, BrainProtocolError, BrainTimeoutError, BrainUnreachableError } from "./errors.js";
export { formatEvent } from "./format-event.js";
