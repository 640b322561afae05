import type { ToolCallRequest } from "./dispatch.js";

/**
 * Text JSON.stringify writes as it is between quotes: printable ASCII but the quote and the
 * backslash, as Brain's ids and the config's tenant ids are. A regular expression reads an id
 * sliced from a request's path faster than a loop of `charCodeAt`.
 */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A tool request's body, as JSON.stringify writes it: the session's identity, the call's id and
 * arguments, and the inspection token where the binding has one. Pure.
 */
export function requestBody(
  request: Pick<
    ToolCallRequest,
    "tenantId" | "sessionId" | "callId" | "arguments" | "argumentsJson" | "inspection"
  >,
): string {
  // identity comes from the authenticated session, never from the model's arguments
  const { tenantId, sessionId, callId } = request;
  const args = request.argumentsJson ?? JSON.stringify(request.arguments);
  if (
    request.inspection ||
    args === undefined ||
    !PLAIN_TEXT.test(tenantId) ||
    !PLAIN_TEXT.test(sessionId) ||
    !PLAIN_TEXT.test(callId)
  ) {
    const body: Record<string, unknown> = {
      tenant_id: tenantId,
      session_id: sessionId,
      call_id: callId,
      arguments: request.arguments,
    };
    if (request.inspection) {
      body.inspection_token = request.inspection.token;
      body.brain_url = request.inspection.brainUrl;
    }
    return JSON.stringify(body);
  }
  // the same text, written around the arguments' text made once (models/tool-call.ts)
  return `{"tenant_id":"${tenantId}","session_id":"${sessionId}","call_id":"${callId}","arguments":${args}}`;
}
