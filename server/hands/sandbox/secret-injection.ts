import type { HandSecret } from '~/server/hands/sandbox/hand-secret';

/** A secret with the placeholder the hand sees in its place. */
export interface PlacedSecret extends HandSecret {
  placeholder: string;
}

type HostMatcher = (host: string, pattern: string) => boolean;
type Headers = Record<string, string | string[] | undefined>;

/**
 * The substitution rules of a hand's egress proxy, in the shape of sandbox-runtime's
 * `SentinelRegistry` (the two methods its TLS-terminating proxy calls per request): a placeholder
 * becomes its value only in a request to one of that secret's hosts, in headers only when the
 * credential's `injection_location.header` allows it, in bodies only when `.body` does. The
 * runtime's own registry substitutes everywhere it may; the API's `injection_location` needs the
 * finer rule, so the launcher puts these two in its registry's place.
 */
export function injectionRules(secrets: readonly PlacedSecret[]) {
  const at = (host: string, matches: HostMatcher) => secrets.filter((s) => s.hosts.some((p) => matches(host, p)));
  const substitute = (value: string, usable: readonly PlacedSecret[]) =>
    usable.reduce((out, s) => (out.includes(s.placeholder) ? out.split(s.placeholder).join(s.value) : out), value);
  return {
    substituteInHeaders: (headers: Headers, destHost: string, matches: HostMatcher): void => {
      const usable = at(destHost, matches).filter((s) => s.header);
      if (usable.length === 0) return;
      for (const [name, value] of Object.entries(headers)) {
        if (value === undefined) continue;
        headers[name] = Array.isArray(value) ? value.map((v) => substitute(v, usable)) : substitute(value, usable);
      }
    },
    sentinelsForHost: (destHost: string, matches: HostMatcher): { sentinel: Buffer; realValue: Buffer }[] =>
      at(destHost, matches)
        .filter((s) => s.body)
        .map((s) => ({ sentinel: Buffer.from(s.placeholder), realValue: Buffer.from(s.value) })),
  };
}
