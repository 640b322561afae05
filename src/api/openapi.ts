import type { Route } from "./router.js";

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
    for (const [status, response] of Object.entries(route.responses)) {
      const types = response.contentTypes ?? ["application/json"];
      responses[status] = {
        description: response.description,
        ...(response.schema && {
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
      parameters: [...pathParams, ...queryParams],
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
