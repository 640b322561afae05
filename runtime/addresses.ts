/** Where a server listens: a host (an IPv6 one without its brackets) and a port, 0 for any free one. */
export interface Listen {
  host: string;
  port: number;
}

/** host:port with a port from 0 to 65535; `[::1]:8082` for IPv6. */
export function parseListen(value: string): Listen | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: (match[1] ?? match[2]) as string, port };
}

/** A config's `listen` field parsed, or undefined with its problem added to `problems`. */
export function listenOf(value: string, problems: string[]): Listen | undefined {
  const listen = parseListen(value);
  if (!listen) problems.push("listen: must be host:port with a port from 0 to 65535");
  return listen;
}

/** Why `value` is not an absolute http(s) URL without user info or fragment, or undefined when it is one. */
export function urlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http or https URL";
  if (url.username !== "" || url.password !== "")
    return "must not contain user info; put credentials in token_env";
  if (value.includes("#")) return "must not contain a fragment";
  return undefined;
}
