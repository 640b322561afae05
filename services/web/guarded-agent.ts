import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { Agent, buildConnector } from "undici";
import { addressRefusal, type HostList, ipLiteral } from "./address-policy.js";

/** Thrown into a fetch when the host is, or resolves to, an address no fetch may reach. */
export class AddressRefused extends Error {
  readonly code = "WEB_ADDRESS_REFUSED";
  constructor(
    readonly host: string,
    readonly address: string,
    readonly why: string,
  ) {
    super(`${host} is ${address === host ? "" : `at ${address}, `}${why}: refused`);
    this.name = "AddressRefused";
  }
}

export interface AddressRules {
  /** Names and ranges that may be reached even at loopback or private addresses (the config's `allow`). */
  allow: HostList;
  /** Ranges no fetch may reach even at public addresses (the config's `deny`). */
  deny: HostList;
}

/** Why `address` is refused for `host`, or undefined when a fetch may connect to it. */
function refusal(rules: AddressRules, host: string, address: string): string | undefined {
  if (rules.deny.hasAddress(address)) return "in a range the service's config denies";
  if (rules.allow.hasHost(host) || rules.allow.hasAddress(address)) return undefined;
  return addressRefusal(address);
}

/**
 * A DNS lookup that fails when any address the name resolves to is refused, so a connection is
 * never even tried to one, and a name whose answers mix public and private addresses is refused
 * whole (an attacker's DNS cannot hide a private address among public ones).
 */
function guardedLookup(rules: AddressRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      for (const { address } of found) {
        const why = refusal(rules, hostname, address);
        if (why) return callback(new AddressRefused(hostname, address, why), "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, found);
      const [first] = found;
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici Agent whose every connection is checked three times: an IP literal before connecting,
 * each DNS answer before connecting (guardedLookup), and the address the socket actually connected
 * to, after connecting and before a byte of the request is written. Redirects are fetched through
 * the same Agent, so each hop passes the same checks.
 */
export function guardedAgent(rules: AddressRules, connectTimeoutMs: number): Agent {
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup(rules) });
  return new Agent({
    connect: (options, callback) => {
      const host = options.hostname;
      const literal = ipLiteral(host);
      if (literal !== undefined) {
        const why = refusal(rules, host, literal);
        if (why) return callback(new AddressRefused(host, literal, why), null);
      }
      connect(options, (error, socket) => {
        if (error) return callback(error, null);
        const connected = socket?.remoteAddress;
        const why = connected === undefined ? "an unknown address" : refusal(rules, host, connected);
        if (why || !socket) {
          socket?.destroy();
          return callback(new AddressRefused(host, connected ?? "?", why ?? "no socket"), null);
        }
        callback(null, socket);
      });
    },
  });
}
