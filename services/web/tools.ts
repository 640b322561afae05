import { type Static, Type } from "@sinclair/typebox";
import { defineTool, type Tool, type ToolContext, type ToolResultObject } from "../../kit/index.js";
import { StringEnum } from "../../protocol/validation.js";
import type { ResultCache } from "./cache.js";
import type { WebError } from "./errors.js";
import { type Format, readableContent } from "./extract.js";
import type { PageFetcher } from "./fetch-page.js";
import { FRESHNESS, type SearchProvider } from "./search/provider.js";

const strict = { additionalProperties: false } as const;
/** While a fetch shows nothing else, how often it says it is still waiting. */
const WAITING_EVERY_MS = 1000;
/** Beyond a tool's own time limit: reading what came (a PDF, a large page) and the way back to Brain. */
const CALL_MARGIN_SECONDS = 30;

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
const FetchOutput = Type.Object(
  {
    url: Type.String(),
    final_url: Type.String(),
    status: Type.Integer(),
    title: Type.Optional(Type.String()),
    content_type: Type.String(),
    format: StringEnum(["markdown", "text"]),
    chars: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean(),
    redirects: Type.Integer({ minimum: 0 }),
    cached: Type.Boolean(),
    fetched_at: Type.String({ format: "date-time" }),
  },
  strict,
);

/**
 * A refusal as the model reads it, with its stable code in `structured_content.error.code`. Error
 * results are exempt from the output schema (docs/protocol.md), so the type fits any tool's result.
 */
export function errorResult(error: WebError): ToolResultObject<never> {
  const result: ToolResultObject = {
    is_error: true,
    content: [{ type: "text", text: error.message }],
    structured_content: { error: { code: error.code, message: error.message }, ...error.details },
  };
  return result as ToolResultObject<never>;
}

/** A success as the cache keeps it: the text and the structured content. */
export type Cached<S> = { text: string; structured: S };
export type SearchStructured = Static<typeof SearchOutput>;
export type FetchStructured = Static<typeof FetchOutput>;

/** A success kept for the tenant, marked as from the cache when it is served again. */
async function throughCache<S extends { cached: boolean }>(
  cache: ResultCache<Cached<S>>,
  ctx: ToolContext,
  key: string,
  produce: () => Promise<Cached<S> | ToolResultObject<never>>,
): Promise<ToolResultObject<S>> {
  const hit = cache.get(ctx.tenant_id, key);
  if (hit) {
    const note = `(from the cache: fetched ${new Date(hit.at).toISOString()})`;
    return {
      content: [{ type: "text", text: `${note}\n${hit.value.text}` }],
      structured_content: { ...hit.value.structured, cached: true },
    };
  }
  const produced = await produce();
  if (!("structured" in produced)) return produced;
  cache.set(ctx.tenant_id, key, produced);
  return { content: [{ type: "text", text: produced.text }], structured_content: produced.structured };
}

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

export function fetchTool(
  fetcher: PageFetcher,
  limits: { maxBytes: number; maxChars: number; timeoutMs: number },
  cache: ResultCache<Cached<FetchStructured>>,
): Tool {
  return defineTool({
    name: "web_fetch",
    timeoutSeconds: Math.ceil(limits.timeoutMs / 1000) + CALL_MARGIN_SECONDS,
    description: `Fetch a web page (http or https) and return its readable content as markdown or text, with its title and final URL after redirects. Reads HTML, text, JSON and PDF, up to ${limits.maxBytes} bytes and ${limits.maxChars} characters.`,
    input: Type.Object(
      {
        url: Type.String({ minLength: 1, maxLength: 4096, description: "The page's absolute http(s) URL." }),
        max_bytes: Type.Optional(
          Type.Integer({
            minimum: 1024,
            maximum: limits.maxBytes,
            description: `Download at most this many bytes (default and most: ${limits.maxBytes}).`,
          }),
        ),
        format: Type.Optional(StringEnum(["markdown", "text"], { default: "markdown" })),
      },
      strict,
    ),
    output: FetchOutput,
    handler: (args, ctx) => {
      const format: Format = args.format ?? "markdown";
      const maxBytes = args.max_bytes ?? limits.maxBytes;
      const key = JSON.stringify(["web_fetch", args.url, format, maxBytes]);
      return throughCache(cache, ctx, key, async () => {
        let lastSaid = Date.now();
        const say = (update: unknown) => {
          lastSaid = Date.now();
          ctx.progress(update);
        };
        const waiting = setInterval(() => {
          if (Date.now() - lastSaid >= WAITING_EVERY_MS) say({ stage: "waiting", url: args.url });
        }, WAITING_EVERY_MS);
        try {
          const fetched = await fetcher.fetch(args.url, { maxBytes, signal: ctx.signal, progress: say });
          if (!fetched.ok) return errorResult(fetched.error);
          const page = fetched.value;
          const read = await readableContent(page, format, limits.maxChars, ctx.signal);
          if (!read.ok) return errorResult(read.error);
          const { title, content, truncated } = read.value;
          const cut = truncated || page.truncated;
          const header = [title && `# ${title}`, `URL: ${page.url}`].filter(Boolean).join("\n");
          const note = cut
            ? `\n\n[cut: ${page.truncated ? `the download stopped at ${maxBytes} bytes` : `the content stopped at ${limits.maxChars} characters`}]`
            : "";
          return {
            text: `${header}\n\n${content}${note}`,
            structured: {
              url: args.url,
              final_url: page.url,
              status: page.status,
              ...(title !== undefined && { title }),
              content_type: page.mediaType,
              format,
              chars: content.length,
              truncated: cut,
              redirects: page.redirects,
              cached: false,
              fetched_at: new Date().toISOString(),
            },
          };
        } finally {
          clearInterval(waiting);
        }
      });
    },
  });
}
