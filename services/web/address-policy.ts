import ipaddr from "ipaddr.js";

/** What ipaddr.js calls each range no fetch may reach, as the refusal names it. */
const REFUSED_RANGES: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (cloud metadata services live there)",
  loopback: "a loopback address",
  private: "a private address",
  uniqueLocal: "a private (unique local) address",
  carrierGradeNat: "a shared (carrier-grade NAT) address",
  reserved: "a reserved address",
  benchmarking: "a benchmarking address",
  amt: "an AMT relay address",
  as112: "an AS112 address",
  as112v6: "an AS112 address",
  discard: "a discard-only address",
  deprecated: "a deprecated address",
  orchid2: "an ORCHID address",
  droneRemoteIdProtocolEntityTags: "a DRIP address",
  rfc6052: "a NAT64 address, which embeds an IPv4 one",
  rfc6145: "an IPv4-translated address",
  "6to4": "a 6to4 address, which embeds an IPv4 one",
  teredo: "a Teredo address, which embeds an IPv4 one",
};

/**
 * Why no fetch may reach `address` (an IP address as a socket or a resolver gives it), or
 * undefined when it is a public unicast address. An IPv4-mapped IPv6 address is judged as the IPv4
 * address it carries; any range other than plain unicast is refused, so a range ipaddr.js learns
 * later is refused until someone decides otherwise.
 */
export function addressRefusal(address: string): string | undefined {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return "not an IP address";
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === "unicast") return undefined;
  return REFUSED_RANGES[range] ?? `an address of the special range "${range}"`;
}

/** An IP literal as a URL's host holds it (`[::1]` for IPv6), or undefined for a name. */
export function ipLiteral(host: string): string | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) && (bare.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(bare))
    ? bare
    : undefined;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An entry written as address/bits. */
const looksLikeCidr = (entry: string) => /^[0-9a-f.:]+\/\d+$/i.test(entry);

/**
 * The config's host list: names (`example.com`), subdomain patterns (`*.example.com`, which
 * matches the subdomains, not the name itself), IP addresses and CIDR ranges (`10.0.0.0/8`).
 * Names are matched against the URL's host, ranges against every address it resolves to.
 */
export class HostList {
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly ranges: Range[] = [];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const lower = entry.toLowerCase();
      if (lower.startsWith("*.")) this.suffixes.push(lower.slice(1));
      else if (looksLikeCidr(lower)) this.ranges.push(ipaddr.parseCIDR(lower));
      else if (ipaddr.isValid(lower.replace(/^\[|\]$/g, ""))) {
        const address = ipaddr.parse(lower.replace(/^\[|\]$/g, ""));
        this.ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
      } else this.names.add(lower);
    }
  }

  /** Whether a URL's host (a name, or an IP literal) is on the list. */
  hasHost(host: string): boolean {
    const lower = host.toLowerCase().replace(/\.$/, "");
    const literal = ipLiteral(lower);
    if (literal !== undefined) return this.hasAddress(literal);
    return this.names.has(lower) || this.suffixes.some((suffix) => lower.endsWith(suffix));
  }

  /** Whether an address is in one of the list's ranges (an IPv4-mapped one as its IPv4 address). */
  hasAddress(address: string): boolean {
    if (this.ranges.length === 0 || !ipaddr.isValid(address)) return false;
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    }
    return this.ranges.some(([base, bits]) => base.kind() === parsed.kind() && parsed.match(base, bits));
  }
}

/** A config entry's problem, or undefined when it is a name, a `*.` pattern, an address or a CIDR range. */
export function hostEntryProblem(entry: string): string | undefined {
  if (looksLikeCidr(entry)) {
    try {
      ipaddr.parseCIDR(entry);
      return undefined;
    } catch {
      return `"${entry}" is not a CIDR range such as 10.0.0.0/8`;
    }
  }
  const name = entry.startsWith("*.") ? entry.slice(2) : entry;
  if (ipaddr.isValid(name.replace(/^\[|\]$/g, ""))) return undefined;
  return /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/i.test(
    name,
  )
    ? undefined
    : `"${entry}" is not a host name, "*.domain", an IP address or a CIDR range`;
}
