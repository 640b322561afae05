/** A request's path and query, as the routes read them. */
export interface RequestTarget {
  readonly pathname: string;
  readonly searchParams: URLSearchParams;
}

// A path of only these characters is one the WHATWG URL parser leaves as it is (no dot segment, no
// escape, no backslash; `//` would start a host). A query of visible ASCII without `#` reads the same
// through URLSearchParams whether the URL parser escaped it first or not.
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9_\-/]*$/;
const PLAIN_QUERY = /^[\x21\x22\x24-\x7e]*$/;

/** A plain target, split at its `?`: its query is parsed only if a route reads it. */
class PlainTarget implements RequestTarget {
  #searchParams: URLSearchParams | undefined;

  constructor(
    readonly pathname: string,
    private readonly query: string,
  ) {}

  get searchParams(): URLSearchParams {
    this.#searchParams ??= new URLSearchParams(this.query);
    return this.#searchParams;
  }
}

/**
 * The path and query of a request target (`/sessions/ses_…/events?after=3`), as the WHATWG URL
 * parser reads it; undefined when it is not a valid path. A plain target, which is what clients
 * send, is split as it is, which gives what the parser would: every request is read here, and
 * `new URL` costs several times the split.
 */
export function requestTarget(raw: string): RequestTarget | undefined {
  const mark = raw.indexOf("?");
  const pathname = mark === -1 ? raw : raw.slice(0, mark);
  const query = mark === -1 ? "" : raw.slice(mark + 1);
  if (PLAIN_PATH.test(pathname) && PLAIN_QUERY.test(query)) return new PlainTarget(pathname, query);
  try {
    return new URL(raw, "http://brain.invalid");
  } catch {
    return undefined;
  }
}
