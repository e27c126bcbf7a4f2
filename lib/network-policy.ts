import { type EnvironmentConfig, environmentHosts } from '~/lib/agent';
import { isIpLiteral } from '~/lib/ip-address';

/**
 * What a session may reach over the network: the one answer its sandbox hands (as their proxy's
 * allowlist) and the harness's `web_fetch` tool both go by.
 *
 * - `limited`: only `hosts`.
 * - `unrestricted`: any public host (the environment asked for it and the server allows it:
 *   `PADDOCK_ALLOW_UNRESTRICTED_NETWORK`). Private, loopback and link-local addresses stay
 *   refused unless listed in `hosts` by exact name or address.
 *
 * `hosts` entries are the sandbox runtime's patterns: `example.com` (that host only),
 * `*.example.com` (its subdomains, not itself and never an IP address), an IP literal, each with
 * an optional `:port`. Names compare without regard to case.
 */
export interface NetworkPolicy {
  type: 'limited' | 'unrestricted';
  hosts: string[];
}

export interface NetworkPolicyInputs {
  /** Hosts every hand of this server may reach (`PADDOCK_HAND_ALLOWED_DOMAINS`). */
  serverHosts: readonly string[];
  /** The session's metadata: its `allowed_domains`, comma-separated, add to the list. */
  sessionMetadata: Readonly<Record<string, string>> | undefined;
  /** The session's environment, when it has one that still exists. */
  environment: EnvironmentConfig | null;
  /** `PADDOCK_ALLOW_UNRESTRICTED_NETWORK`: without it an unrestricted environment gets only the listed hosts. */
  allowUnrestricted: boolean;
}

/** A session's network policy, from the server's list, the session's own and its environment's. */
export function sessionNetworkPolicy(i: NetworkPolicyInputs): NetworkPolicy {
  const own = (i.sessionMetadata?.allowed_domains ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  const env = i.environment ? environmentHosts(i.environment) : [];
  const unrestricted = i.allowUnrestricted && i.environment?.type === 'cloud' && i.environment.networking.type === 'unrestricted';
  return { type: unrestricted ? 'unrestricted' : 'limited', hosts: [...new Set([...i.serverHosts, ...own, ...env])] };
}

/** `host:port` → its parts (an IPv6 literal has no port unless bracketed: `[::1]:8080`). */
export function splitPort(entry: string): { host: string; port: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] === undefined ? undefined : Number(bracketed[2]) };
  const m = /^([^:]+):(\d{1,5})$/.exec(entry);
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: entry, port: undefined };
}

const unbracket = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);

/**
 * How one allowlist entry matches `host` (as a URL spells it: lower case, IPv6 in brackets or
 * not) at `port`, with the sandbox runtime's semantics: `exact` (the entry names this host),
 * `wildcard` (a `*.` entry covering it), or null.
 */
export function hostEntryMatch(host: string, port: number, entry: string): 'exact' | 'wildcard' | null {
  const e = splitPort(entry.trim());
  if (e.port !== undefined && e.port !== port) return null;
  const h = unbracket(host).toLowerCase();
  const pattern = unbracket(e.host).toLowerCase();
  if (pattern.startsWith('*.')) return !isIpLiteral(h) && h.endsWith(pattern.slice(1)) ? 'wildcard' : null;
  return h === pattern ? 'exact' : null;
}

/**
 * Whether the policy lets a connection to `host:port` through, and whether the host is listed by
 * exact name or address (which alone allows a private address: how a test reaches a local server).
 */
export function networkAllows(policy: NetworkPolicy, host: string, port: number): { allowed: boolean; explicit: boolean } {
  const matches = policy.hosts.map((entry) => hostEntryMatch(host, port, entry));
  const explicit = matches.includes('exact');
  return { allowed: policy.type === 'unrestricted' || explicit || matches.includes('wildcard'), explicit };
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST_NAME = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*$`, 'i');

/**
 * Whether `entry` is a well-formed allowlist entry: a host name, `*.` and a domain, an IPv4
 * literal or an IPv6 literal (bracketed when it has a port), each with an optional `:port`
 * (1–65535). A bare `*`, a range or a URL is not one.
 */
export function isHostEntry(entry: string): boolean {
  const { host, port } = splitPort(entry);
  if (port !== undefined && (port < 1 || port > 65535)) return false;
  const h = unbracket(host);
  return isIpLiteral(h) || (!h.includes(':') && HOST_NAME.test(h));
}
