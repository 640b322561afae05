import type { IncomingMessage, ServerResponse } from "node:http";
import type { TSchema } from "@sinclair/typebox";
import { percentDecoded } from "../../runtime/percent-decoding.js";
import type { InspectionPrincipal } from "./inspection.js";
import type { RequestTarget } from "./request-target.js";

export type Method = "GET" | "POST" | "DELETE";

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: RequestTarget;
  params: Record<string, string>;
  /** The tenant the API key selects, or the inspection token's tenant. Empty on public routes. */
  tenantId: string;
  /** Set when the caller presented an inspection token instead of an API key. */
  inspection: InspectionPrincipal | undefined;
}

export interface Route {
  method: Method;
  /** OpenAPI-style template, e.g. "/sessions/{id}/events". */
  path: string;
  /**
   * "tenant": a tenant's API key; "session_reader": an API key, or an inspection token for the
   * session in the path; "public": holds nothing a tenant owns.
   */
  auth: "tenant" | "session_reader" | "public";
  summary: string;
  operationId: string;
  requestBody?: { schema: TSchema; required: boolean };
  query?: Record<string, { description: string; schema: Record<string, unknown> }>;
  /** Takes an Idempotency-Key header (src/api/idempotency.ts). */
  idempotent?: true;
  responses: Record<
    number,
    { description: string; schema?: TSchema | Record<string, unknown>; contentTypes?: string[] }
  >;
  handle: (ctx: RequestContext) => Promise<void> | void;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export type Match =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: Method[] }
  | { kind: "not_found" };

/** Matches a request path against the route table, segment by segment. */
export class Router {
  readonly #routes: CompiledRoute[];

  constructor(readonly routes: readonly Route[]) {
    this.#routes = routes.map((route) => ({ route, segments: route.path.split("/").slice(1) }));
  }

  match(method: string, pathname: string): Match {
    const parts = pathname.split("/").slice(1);
    const allow: Method[] = [];
    for (const { route, segments } of this.#routes) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let matches = true;
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i] as string;
        const part = parts[i] as string;
        if (segment.startsWith("{")) {
          if (part === "") {
            matches = false;
            break;
          }
          const decoded = percentDecoded(part);
          if (decoded === undefined) {
            matches = false;
            break;
          }
          params[segment.slice(1, -1)] = decoded;
        } else if (segment !== part) {
          matches = false;
          break;
        }
      }
      if (!matches) continue;
      if (route.method === method) return { kind: "found", route, params };
      allow.push(route.method);
    }
    return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
  }
}
