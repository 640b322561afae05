import { type Static, Type } from "@sinclair/typebox";
import { defineTool, type Tool } from "../../kit/index.js";
import { StringEnum } from "../../protocol/validation.js";
import type { ResultCache } from "./cache.js";
import { CALL_MARGIN_SECONDS, type Cached, errorResult, throughCache } from "./results.js";
import { FRESHNESS, type SearchProvider } from "./search/provider.js";

const strict = { additionalProperties: false } as const;

const Hit = Type.Object(
  {
    title: Type.String(),
    url: Type.String(),
    snippet: Type.String(),
    published: Type.Optional(Type.String()),
  },
  strict,
);
const SearchOutput = Type.Object(
  {
    query: Type.String(),
    provider: Type.String(),
    results: Type.Array(Hit),
    cached: Type.Boolean(),
    searched_at: Type.String({ format: "date-time" }),
  },
  strict,
);
export type SearchStructured = Static<typeof SearchOutput>;

/** web_search: the configured provider's results, as a list for the model and as structured content. */
export function searchTool(
  provider: SearchProvider,
  timeoutMs: number,
  cache: ResultCache<Cached<SearchStructured>>,
): Tool {
  return defineTool({
    name: "web_search",
    timeoutSeconds: Math.ceil(timeoutMs / 1000) + CALL_MARGIN_SECONDS,
    description: `Search the web (${provider.name}). Returns each result's title, URL, a snippet and, where known, when it was published. Read a result in full with web_fetch.`,
    input: Type.Object(
      {
        query: Type.String({ minLength: 1, maxLength: 400, description: "What to search for." }),
        count: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 20, default: 5, description: "How many results." }),
        ),
        freshness: Type.Optional(
          StringEnum(FRESHNESS, { description: "Only pages from the last day, week, month or year." }),
        ),
        site: Type.Optional(
          Type.String({
            pattern:
              "^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
            description: 'Only results from this site, such as "nodejs.org".',
          }),
        ),
      },
      strict,
    ),
    output: SearchOutput,
    handler: (args, ctx) => {
      const request = { ...args, count: args.count ?? 5 };
      const key = JSON.stringify([
        "web_search",
        request.query,
        request.count,
        request.freshness,
        request.site,
      ]);
      return throughCache(cache, ctx, key, async () => {
        const found = await provider.search(request, ctx.signal);
        if (!found.ok) return errorResult(found.error);
        const lines = found.value.map((hit, i) =>
          [
            `${i + 1}. ${hit.title}`,
            `   ${hit.url}`,
            hit.published && `   published: ${hit.published}`,
            hit.snippet && `   ${hit.snippet}`,
          ]
            .filter(Boolean)
            .join("\n"),
        );
        const text =
          lines.length === 0
            ? `No results for "${request.query}" (${provider.name}).`
            : `${lines.length} results for "${request.query}" (${provider.name}):\n\n${lines.join("\n\n")}`;
        return {
          text,
          structured: {
            query: request.query,
            provider: provider.name,
            results: found.value,
            cached: false,
            searched_at: new Date().toISOString(),
          },
        };
      });
    },
  });
}
