import type { HandSecret } from '~/server/hands/sandbox/hand-secret';

/** A secret with the placeholder the hand sees in its place. */
export interface PlacedSecret extends HandSecret {
  placeholder: string;
}

type HostMatcher = (host: string, pattern: string) => boolean;
type Headers = Record<string, string | string[] | undefined>;

/** Where a value goes in headers when its credential names none: where an API token usually goes. */
export const DEFAULT_HEADER_NAMES: readonly string[] = ['authorization'];
const HTTPS_PORT = 443;

/** A credential host, `name` or `name:port`: without a port it means 443 only (where HTTPS goes). */
export function hostAndPort(pattern: string): { host: string; port: number } {
  const m = /^(.*):(\d{1,5})$/.exec(pattern);
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: pattern, port: HTTPS_PORT };
}

/** The port of a request's authority (`host`, `host:port`, `[v6]:port`); null when there is none. */
function portOfAuthority(authority: string | string[] | undefined): number | null {
  if (typeof authority !== 'string' || authority === '') return null;
  const m = /:(\d{1,5})$/.exec(authority);
  if (m && !(authority.startsWith('[') && !authority.includes(']:'))) return Number(m[1]);
  return HTTPS_PORT;
}

/**
 * The substitution rules of a hand's egress proxy, in the shape of sandbox-runtime's
 * `SentinelRegistry` (the two methods its TLS-terminating proxy calls per request): a placeholder
 * becomes its value only in a request to one of that secret's hosts on that host's port (443 when
 * none is listed), in headers only when the credential's `injection_location.header` allows it and
 * only in the headers it names (`Authorization` by default), in bodies only when `.body` does.
 * The runtime's own registry substitutes in any header on any port; the API's rules need these.
 *
 * The runtime hands these methods a host name only. The port comes from the request's `Host`
 * header, which the runtime sets from the tunnel's own target (formatAuthority: `:443` left out)
 * before it calls `substituteInHeaders`; the body rule, called right after it for the same
 * request in the same tick, reuses that port once, and substitutes nothing without it (fail closed).
 */
export function injectionRules(secrets: readonly PlacedSecret[]) {
  const usableAt = (host: string, port: number, matches: HostMatcher) =>
    secrets.filter((s) => s.hosts.some((p) => {
      const hp = hostAndPort(p);
      return hp.port === port && matches(host, hp.host);
    }));
  const substitute = (value: string, usable: readonly PlacedSecret[]) =>
    usable.reduce((out, s) => (out.includes(s.placeholder) ? out.split(s.placeholder).join(s.value) : out), value);
  let lastRequest: { host: string; port: number } | null = null;
  return {
    substituteInHeaders: (headers: Headers, destHost: string, matches: HostMatcher): void => {
      lastRequest = null;
      const port = portOfAuthority(headers.host);
      if (port === null) return;
      lastRequest = { host: destHost, port };
      const usable = usableAt(destHost, port, matches);
      if (usable.length === 0) return;
      // The answer must come back uncompressed, so that a value the upstream echoes can be seen
      // (and scrubbed) on its way back to the hand.
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'accept-encoding') delete headers[name];
      for (const [name, value] of Object.entries(headers)) {
        if (value === undefined) continue;
        const lower = name.toLowerCase();
        const here = usable.filter((s) => s.header && (s.headerNames ?? DEFAULT_HEADER_NAMES).includes(lower));
        if (here.length === 0) continue;
        headers[name] = Array.isArray(value) ? value.map((v) => substitute(v, here)) : substitute(value, here);
      }
    },
    sentinelsForHost: (destHost: string, matches: HostMatcher): { sentinel: Buffer; realValue: Buffer }[] => {
      const at = lastRequest;
      lastRequest = null;
      if (!at || at.host !== destHost) return [];
      return usableAt(destHost, at.port, matches)
        .filter((s) => s.body)
        .map((s) => ({ sentinel: Buffer.from(s.placeholder), realValue: Buffer.from(s.value) }));
    },
  };
}
