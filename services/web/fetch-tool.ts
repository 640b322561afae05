import { type Static, Type } from "@sinclair/typebox";
import { defineTool, type Tool } from "../../kit/index.js";
import { StringEnum } from "../../protocol/validation.js";
import type { ResultCache } from "./cache.js";
import { type Format, readableContent } from "./extract.js";
import type { PageFetcher } from "./fetch-page.js";
import { CALL_MARGIN_SECONDS, type Cached, errorResult, throughCache } from "./results.js";

const strict = { additionalProperties: false } as const;
/** While a fetch shows nothing else, how often it says it is still waiting. */
const WAITING_EVERY_MS = 1000;

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

export type FetchStructured = Static<typeof FetchOutput>;

/** web_fetch: a page's readable content, its title and final URL, with progress while it comes. */
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
