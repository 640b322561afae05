import type { HostList } from "./address-policy.js";
import { fail, type Outcome, ok } from "./errors.js";

/**
 * A URL a fetch may ask for: absolute, http or https, without a user name or password, its host
 * not on the deny list. The WHATWG parser has already made `http://2130706433/`,
 * `http://0x7f.1/` and `http://0177.0.0.1/` into `127.0.0.1`, so the address checks that follow
 * (guarded-agent.ts) see every spelling of an address as the address.
 */
export function checkUrl(raw: string, deny: HostList): Outcome<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail("invalid_url", `"${raw.slice(0, 200)}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return fail("invalid_url", `${url.protocol.slice(0, -1)} URLs are not fetched: only http and https`);
  }
  if (url.username !== "" || url.password !== "") {
    return fail("credentials_refused", "a URL with a user name or password is refused; ask without them");
  }
  if (deny.hasHost(url.hostname)) return fail("host_denied", `${url.hostname} is on the service's deny list`);
  url.hash = "";
  return ok(url);
}
