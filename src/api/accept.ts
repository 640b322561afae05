/**
 * Whether an Accept header asks for text/event-stream: a media range naming it, in any case, and
 * not refused with q=0 (RFC 9110, section 12.5.1).
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  for (const range of (accept ?? "").split(",")) {
    const [type, ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    if (type !== "text/event-stream") continue;
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    return q === undefined || Number(q.slice(q.indexOf("=") + 1)) > 0;
  }
  return false;
}
