import { Type } from "@sinclair/typebox";
import type { Dispatcher } from "undici";
import { compile } from "../../../protocol/validation.js";
import type { Secret } from "../../../runtime/secret.js";
import type { Outcome } from "../errors.js";
import {
  askProvider,
  hitsOf,
  jsonOrUndefined,
  refusalOf,
  retryAfterSeconds,
  type SearchHit,
  type SearchProvider,
  type SearchRequest,
} from "./provider.js";

const NAME = "Tavily";

// The part of Tavily's search response read here; `published_date` comes with topic "news".
const TavilyAnswer = Type.Object({
  results: Type.Array(
    Type.Object({
      title: Type.String(),
      url: Type.String(),
      content: Type.Optional(Type.String()),
      published_date: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
  ),
});
const validateAnswer = compile<{
  results: { title: string; url: string; content?: string; published_date?: string | null }[];
}>(TavilyAnswer);

/** Tavily's error body: `{"detail": {"error": "…"}}`. */
function tavilyError(body: string): string {
  const parsed = jsonOrUndefined(body) as { detail?: { error?: unknown } | string } | undefined;
  const detail = parsed?.detail;
  if (typeof detail === "string") return detail;
  return typeof detail?.error === "string" ? detail.error : "";
}

/** Tavily: `POST …/search` with a JSON body and the key as `Authorization: Bearer tvly-…`. */
export function tavilyProvider(
  options: { url: string; apiKey: Secret; timeoutMs: number },
  dispatcher: Dispatcher,
): SearchProvider {
  return {
    name: NAME,
    async search(request: SearchRequest, signal: AbortSignal): Promise<Outcome<SearchHit[]>> {
      const answer = await askProvider(
        NAME,
        new URL(options.url),
        {
          method: "POST",
          headers: {
            accept: "application/json",
            "content-type": "application/json",
            authorization: `Bearer ${options.apiKey.reveal()}`,
          },
          body: JSON.stringify({
            query: request.query,
            max_results: request.count,
            search_depth: "basic",
            topic: "general",
            ...(request.freshness && { time_range: request.freshness }),
            ...(request.site && { include_domains: [request.site] }),
          }),
        },
        { timeoutMs: options.timeoutMs, signal, dispatcher },
      );
      if (!answer.ok) return answer;
      const { status, headers, body } = answer.value;
      if (status === 200) {
        return hitsOf(
          NAME,
          validateAnswer,
          body,
          (answer) => answer.results,
          (result) => ({
            title: result.title,
            url: result.url,
            snippet: result.content ?? "",
            ...(typeof result.published_date === "string" && { published: result.published_date }),
          }),
          request.count,
        );
      }
      return refusalOf(NAME, status, {
        said: tavilyError(body),
        auth: status === 401 || status === 403,
        // 432: the plan's limit; 433: the pay-as-you-go limit
        quota: status === 432 || status === 433,
        retryAfter: retryAfterSeconds(headers),
      });
    },
  };
}
