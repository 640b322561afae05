import { Type } from "@sinclair/typebox";
import type { Dispatcher } from "undici";
import { compile } from "../../../protocol/validation.js";
import type { Outcome } from "../errors.js";
import {
  askProvider,
  hitsOf,
  refusalOf,
  retryAfterSeconds,
  type SearchHit,
  type SearchProvider,
  type SearchRequest,
  withSite,
} from "./provider.js";

const NAME = "SearXNG";

// The part of SearXNG's JSON answer read here; `publishedDate` is null when the engine had none.
const SearxngAnswer = Type.Object({
  results: Type.Array(
    Type.Object({
      title: Type.String(),
      url: Type.String(),
      content: Type.Optional(Type.String()),
      publishedDate: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
  ),
});
const validateAnswer = compile<{
  results: { title: string; url: string; content?: string; publishedDate?: string | null }[];
}>(SearxngAnswer);

/** A self-hosted SearXNG: `GET {url}/search?q=…&format=json`, no key. */
export function searxngProvider(
  options: { url: string; timeoutMs: number },
  dispatcher: Dispatcher,
): SearchProvider {
  return {
    name: NAME,
    async search(request: SearchRequest, signal: AbortSignal): Promise<Outcome<SearchHit[]>> {
      const url = new URL("search", options.url.endsWith("/") ? options.url : `${options.url}/`);
      url.searchParams.set("q", withSite(request));
      url.searchParams.set("format", "json");
      url.searchParams.set("pageno", "1");
      if (request.freshness) url.searchParams.set("time_range", request.freshness);
      const answer = await askProvider(
        NAME,
        url,
        { method: "GET", headers: { accept: "application/json" } },
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
            ...(typeof result.publishedDate === "string" && { published: result.publishedDate }),
          }),
          request.count,
        );
      }
      // SearXNG answers errors with Flask's HTML pages, so the status is all there is to read
      return refusalOf(NAME, status, {
        said: status === 403 ? "Forbidden" : status === 429 ? "its limiter blocked this client" : "",
        auth: false,
        quota: false,
        retryAfter: retryAfterSeconds(headers),
        ...(status === 403 && {
          rejectedAdvice:
            "the instance does not serve JSON: the operator must add json to search.formats in its settings.yml",
        }),
      });
    },
  };
}
