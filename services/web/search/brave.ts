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
  withSite,
} from "./provider.js";

const NAME = "Brave Search";

// The part of Brave's WebSearchApiResponse read here; `web` is absent when nothing matched.
const BraveAnswer = Type.Object({
  web: Type.Optional(
    Type.Object({
      results: Type.Array(
        Type.Object({
          title: Type.String(),
          url: Type.String(),
          description: Type.Optional(Type.String()),
          page_age: Type.Optional(Type.String()),
          age: Type.Optional(Type.String()),
        }),
      ),
    }),
  ),
});
const validateAnswer = compile<{
  web?: { results: { title: string; url: string; description?: string; page_age?: string; age?: string }[] };
}>(BraveAnswer);

const FRESHNESS = { day: "pd", week: "pw", month: "pm", year: "py" } as const;

/** Brave's error body: `{"type": "ErrorResponse", "error": {code, detail, status}}` (its docs show `errors: [..]` too). */
function braveError(body: string): { code: string; detail: string } {
  const parsed = jsonOrUndefined(body) as
    | { error?: { code?: unknown; detail?: unknown }; errors?: { code?: unknown; detail?: unknown }[] }
    | undefined;
  const error = parsed?.error ?? parsed?.errors?.[0];
  return {
    code: typeof error?.code === "string" ? error.code : "",
    detail: typeof error?.detail === "string" ? error.detail : "",
  };
}

/**
 * Seconds until the exhausted window of Brave's rate limit resets: `X-RateLimit-Remaining: 0, 980`
 * and `X-RateLimit-Reset: 1, 1419704` say the per-second window is spent and resets in 1 s.
 * Undefined when the headers do not say, or say something that is not a whole number of seconds.
 */
export function braveResetSeconds(headers: Headers): number | undefined {
  // Number("") is 0: an absent header or an empty part must not read as "0 seconds"
  const list = (name: string) =>
    (headers.get(name)?.split(",") ?? []).map((part) =>
      /^\d+$/.test(part.trim()) ? Number(part.trim()) : undefined,
    );
  const spent = list("x-ratelimit-remaining").indexOf(0);
  return list("x-ratelimit-reset")[spent === -1 ? 0 : spent];
}

/** Brave Search API: `GET …/res/v1/web/search?q=…` with the key in `X-Subscription-Token`. */
export function braveProvider(
  options: { url: string; apiKey: Secret; timeoutMs: number },
  dispatcher: Dispatcher,
): SearchProvider {
  return {
    name: NAME,
    async search(request: SearchRequest, signal: AbortSignal): Promise<Outcome<SearchHit[]>> {
      const url = new URL(options.url);
      url.searchParams.set("q", withSite(request));
      url.searchParams.set("count", String(request.count));
      url.searchParams.set("text_decorations", "false");
      if (request.freshness) url.searchParams.set("freshness", FRESHNESS[request.freshness]);
      const answer = await askProvider(
        NAME,
        url,
        {
          method: "GET",
          headers: {
            accept: "application/json",
            "accept-encoding": "gzip",
            "x-subscription-token": options.apiKey.reveal(),
          },
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
          (answer) => answer.web?.results ?? [],
          (result) => ({
            title: result.title,
            url: result.url,
            snippet: result.description ?? "",
            ...(result.page_age !== undefined && { published: result.page_age }),
          }),
          request.count,
        );
      }
      const { code, detail } = braveError(body);
      return refusalOf(NAME, status, {
        said: [code, detail].filter(Boolean).join(": "),
        // a refused key is a 422 SUBSCRIPTION_TOKEN_INVALID, not a 401
        auth: code.startsWith("SUBSCRIPTION_TOKEN") || status === 401 || status === 403,
        quota: code === "QUOTA_LIMITED",
        retryAfter: retryAfterSeconds(headers) ?? braveResetSeconds(headers),
      });
    },
  };
}
