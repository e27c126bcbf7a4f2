import 'server-only';
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { parseIPv4, parseIPv6 } from '~/lib/ip-address';
import { hostAddresses, refusedAddressClass } from '~/server/net/host-addresses';

export { hostAddresses, refusedAddressClass };

/**
 * The one address policy for every connection the server makes on someone's behalf (web_fetch,
 * MCP servers, OAuth token endpoints, git remotes): a host is resolved here, every answer outside
 * public space is refused (loopback, private, link-local, … and this machine's own interface
 * addresses, which a public-looking address such as eth0's can be), and the connection is pinned
 * to the address that passed (`pinnedLookup`), so DNS rebinding between check and connect changes
 * nothing.
 */

export interface Address {
  address: string;
  family: 4 | 6;
}

/** Name resolution (a seam for tests: a name that resolves to a private address). */
export type Resolve = (host: string) => Promise<Address[]>;

export const systemResolve: Resolve = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** An IP literal as an address to connect to, or null for a name. */
export function literalAddress(host: string): Address | null {
  return parseIPv4(host) ? { address: host, family: 4 } : parseIPv6(host) ? { address: host.replace(/^\[|\]$/g, ''), family: 6 } : null;
}

export type AddressChoice = { ok: true; to: Address } | { ok: false; literal: boolean; refused: string[] };

/**
 * Where to connect for `host`, from `candidates` (its resolved addresses, or the literal itself):
 * the first that is public, or any when `trusted` (someone listed this host or address on purpose).
 */
export function chooseAddress(host: string, candidates: readonly Address[], trusted: (a: Address) => boolean): AddressChoice {
  const own = hostAddresses();
  const refused: string[] = [];
  for (const c of candidates) {
    if (trusted(c)) return { ok: true, to: c };
    const why = refusedAddressClass(c.address, own);
    if (why === null) return { ok: true, to: c };
    refused.push(why);
  }
  return { ok: false, literal: literalAddress(host) !== null, refused: [...new Set(refused)] };
}

/** A `lookup` for http(s).request / net.connect that answers only `to`: the socket goes where the check said. */
export function pinnedLookup(to: Address): LookupFunction {
  return ((_host: string, opts: { all?: boolean } | undefined, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: to.address, family: to.family }]);
    else cb(null, to.address, to.family);
  }) as unknown as LookupFunction;
}
