/**
 * How a tool call ended when Brain made its result: the `error.code` of a `tool.result` (the
 * outcomes table of docs/protocol.md). They are API: clients and models branch on them.
 */
export const OUTCOME_CODES = [
  "invalid_arguments",
  "unknown_tool",
  "unreachable",
  "http_status",
  "redirect",
  "headers_timeout",
  "timeout",
  "connection_lost",
  "invalid_result",
  "output_too_large",
  "cancelled",
  "brain_restarted",
  "denied",
  "approval_expired",
] as const;

export type OutcomeCode = (typeof OUTCOME_CODES)[number];

/**
 * Whether the tool may have done the work (`unknown_outcome`), by code; for `http_status` it
 * depends on the status: a 5xx may have done it, a 4xx refused it.
 */
export const UNKNOWN_OUTCOME: Readonly<Record<Exclude<OutcomeCode, "http_status">, boolean>> = {
  invalid_arguments: false,
  unknown_tool: false,
  unreachable: false,
  redirect: true,
  headers_timeout: true,
  timeout: true,
  connection_lost: true,
  invalid_result: true,
  output_too_large: true,
  cancelled: true,
  brain_restarted: true,
  denied: false,
  approval_expired: false,
};
