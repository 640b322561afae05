/**
 * The codes of every refusal the web service makes. They are API: tools answer with them in
 * `structured_content.error.code`, tests check them, and callers branch on them, never on messages.
 */
export type WebErrorCode =
  /** Not an absolute URL, or one with a scheme other than http and https. */
  | "invalid_url"
  /** The URL carries a user name or password; they are never sent. */
  | "credentials_refused"
  /** The host is on the config's deny list, or is not on a non-empty allow list of names. */
  | "host_denied"
  /** The host is, or resolves to, an address no fetch may reach: loopback, private, link-local, … */
  | "address_refused"
  /** The host name does not resolve. */
  | "dns_failed"
  /** The connection failed or broke off. */
  | "connect_failed"
  /** The page took longer than the service's time limit. */
  | "timeout"
  | "too_many_redirects"
  /** The site answered with a status other than 2xx (`details.status`). */
  | "http_error"
  /** The content is not text, HTML, JSON or PDF. */
  | "unsupported_content_type"
  /** A PDF larger than the download limit (a cut PDF cannot be read). */
  | "too_large"
  /** The site's robots.txt disallows the page for this service's User-Agent. */
  | "robots_disallowed"
  /** The page came, but no text could be read from it (a broken PDF, say). */
  | "unreadable"
  /** The search provider refused the key. */
  | "provider_auth"
  /** The key's plan or quota is used up. */
  | "provider_quota"
  /** The provider asks to slow down (`details.retry_after_seconds` when it said). */
  | "provider_rate_limited"
  /** The provider refused the request as malformed. */
  | "provider_rejected"
  /** The provider failed, could not be reached, or answered something that is not its API. */
  | "provider_failed";

export interface WebError {
  code: WebErrorCode;
  /** For people and models: what happened and what to do. Never holds a secret. */
  message: string;
  /** Facts a caller may act on, such as the status a site answered with. */
  details?: Record<string, unknown>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: WebError };

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });

export function fail<T = never>(
  code: WebErrorCode,
  message: string,
  details?: Record<string, unknown>,
): Outcome<T> {
  return { ok: false, error: details ? { code, message, details } : { code, message } };
}
