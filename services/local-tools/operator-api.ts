import type { IncomingMessage, ServerResponse } from "node:http";
import {
  bearerAuth,
  type ExtraRoutes,
  readJsonBody,
  sendError,
  sendJson,
  sendUnauthorized,
} from "../../kit/index.js";
import type { Answer, ApprovalStore } from "./approvals.js";
import { OPERATOR_PAGE } from "./operator-page.js";

const MAX_LISTED = 1000;

/** The operator's answer, or what is wrong with it. Pure. */
export function parseAnswer(body: unknown): { answer: Answer; by: string } | { problem: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { problem: "the body must be a JSON object" };
  const { answer, by, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return { problem: `${unknown[0]}: unknown field` };
  if (answer !== "yes" && answer !== "no") return { problem: 'answer: must be "yes" or "no"' };
  if (by !== undefined && (typeof by !== "string" || by.length > 100)) {
    return { problem: "by: must be a string of at most 100 characters" };
  }
  return { answer, by: typeof by === "string" && by.trim() !== "" ? by.trim() : "operator" };
}

/**
 * The operator's routes: the page (static, holds no data: it asks for the operator token and
 * sends it as a bearer header, so there is no cookie to ride on) and the JSON endpoints it uses,
 * which take the operator token only — never the tools token Brain holds.
 */
export function operatorRoutes(store: ApprovalStore, operatorToken: string): ExtraRoutes {
  const authorized = bearerAuth(operatorToken);
  return async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const path = url.pathname.replace(/\/+$/, "");
    if (path !== "/operator" && !path.startsWith("/operator/")) return false;
    if (path === "/operator") {
      if (req.method !== "GET") return methodNotAllowed(res, "GET");
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy":
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
        "referrer-policy": "no-referrer",
      });
      res.end(OPERATOR_PAGE);
      return true;
    }
    if (!authorized(req.headers.authorization)) {
      sendUnauthorized(res);
      return true;
    }
    if (path === "/operator/approvals") {
      if (req.method !== "GET") return methodNotAllowed(res, "GET");
      sendJson(res, 200, { approvals: store.pending(MAX_LISTED) });
      return true;
    }
    const match = /^\/operator\/approvals\/([A-Za-z0-9_-]{1,64})$/.exec(path);
    if (!match) {
      sendError(res, "not_found", `nothing at ${url.pathname}`);
      return true;
    }
    const id = match[1] as string;
    if (req.method === "GET") {
      const approval = store.get(id);
      if (approval) sendJson(res, 200, approval);
      else sendError(res, "not_found", `no approval ${id}`);
      return true;
    }
    if (req.method !== "POST") return methodNotAllowed(res, "GET, POST");
    const body = await readJsonBody(req, 4096);
    if (!body.ok) {
      sendError(res, body.code, body.message);
      return true;
    }
    const parsed = parseAnswer(body.value);
    if ("problem" in parsed) {
      sendError(res, "invalid_request", parsed.problem);
      return true;
    }
    const answered = store.answer(id, parsed.answer, parsed.by);
    if ("code" in answered) {
      if (answered.code === "not_found") sendError(res, "not_found", answered.message);
      else sendJson(res, 409, { error: answered });
      return true;
    }
    sendJson(res, 200, answered);
    return true;
  };
}

function methodNotAllowed(res: ServerResponse, allow: string): true {
  sendError(res, "method_not_allowed", `use ${allow}`, { allow });
  return true;
}
