import { argumentsJson } from "../models/arguments-json.js";
import type { ToolCallRequest } from "./dispatch.js";

/**
 * A tool request's body, as JSON.stringify writes it: the session's identity, the call's id and
 * arguments, and the inspection token where the binding has one. Pure.
 */
export function requestBody(
  request: Pick<ToolCallRequest, "tenantId" | "sessionId" | "callId" | "arguments" | "inspection">,
): string {
  // identity comes from the authenticated session, never from the model's arguments
  const { tenantId, sessionId, callId } = request;
  const args = argumentsJson(request.arguments);
  if (
    request.inspection ||
    args === undefined ||
    !plainText(tenantId) ||
    !plainText(sessionId) ||
    !plainText(callId)
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
  // the same text, written around the arguments' text made once (models/arguments-json.ts)
  return `{"tenant_id":"${tenantId}","session_id":"${sessionId}","call_id":"${callId}","arguments":${args}}`;
}

/**
 * Whether JSON.stringify writes `text` as it is between quotes: printable ASCII with no quote or
 * backslash, as Brain's ids and the config's tenant ids are.
 */
function plainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return false;
  }
  return true;
}
