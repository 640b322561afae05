import { ErrorResponseSchema } from "../../protocol/errors.js";
import type { Route } from "./router.js";

type Responses = Route["responses"];
const error = (description: string) => ({ description, schema: ErrorResponseSchema });

/**
 * What any operation may answer besides its own statuses: refusals made before a handler runs
 * (Node's parser, the time limit, authentication, the body reader) and Brain's own failure.
 */
function commonResponses(route: Route): Responses {
  const responses: Responses = {
    408: error("The request did not arrive within limits.request_timeout_seconds."),
    431: error("The request's headers are too large."),
    500: error("Brain failed to handle the request; it is logged."),
  };
  if (route.auth !== "public") {
    responses[401] = error("No or wrong API key.");
    responses[429] = error("The tenant is over its requests_per_second; try again after Retry-After.");
    responses[503] = error(
      "The store cannot be reached (PostgreSQL away); nothing was lost, try again after Retry-After.",
    );
  }
  if (route.query) responses[400] = error("A query parameter out of range.");
  if (route.requestBody) {
    responses[400] = error("The body is not valid JSON, or does not match the schema.");
    responses[413] = error("The body is over limits.max_request_bytes.");
    responses[415] = error("The body is not Content-Type: application/json.");
  }
  return responses;
}

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Any 1 to 255 visible ASCII characters (a UUID, say). The same key and body within 24 h get the first answer again and do nothing twice; another body, 422.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/** The OpenAPI 3.1 document, derived from the route table so it cannot drift from the real routes. */
export function buildOpenApi(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParams = Object.entries(route.query ?? {}).map(([name, param]) => ({
      name,
      in: "query",
      required: false,
      description: param.description,
      schema: param.schema,
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries({ ...commonResponses(route), ...route.responses })) {
      const types = response.contentTypes ?? (response.schema ? ["application/json"] : []);
      responses[status] = {
        description: response.description,
        ...(types.length > 0 && {
          content: Object.fromEntries(
            types.map((type) => [type, type === "application/json" ? { schema: response.schema } : {}]),
          ),
        }),
      };
    }
    const operation = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.auth === "public" && { security: [] }),
      parameters: [...pathParams, ...queryParams, ...(route.idempotent ? [IDEMPOTENCY_KEY] : [])],
      ...(route.requestBody && {
        requestBody: {
          required: route.requestBody.required,
          content: { "application/json": { schema: route.requestBody.schema } },
        },
      }),
      responses,
    };
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation;
    paths[route.path] = item;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Brain",
      version: "0.1.0",
      description: "An agent server: sessions, turns, and tools called over HTTP.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
