import type { SandboxAskCallback, SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { DENIED_RANGES, isIpLiteral } from '~/lib/ip-address';
import { refusedAddressClass } from '~/server/net/host-addresses';
import type { SandboxPolicy } from '~/server/hands/sandbox/policy';

/**
 * A hand's policy as sandbox-runtime's configuration (the launcher passes it to
 * `SandboxManager.initialize`). Pure, so the mapping is tested without starting a sandbox.
 *
 * Networking. The runtime's proxy allows a host on `allowedDomains`; any other host goes to the
 * ask callback, and without one is refused. The runtime's schema forbids `*` there, so an
 * `unrestricted` hand gets a callback that lets every other host through except an IP literal in
 * private, loopback, link-local or other non-public space (a name is dialled through the runtime's
 * resolved-address guard, which already refuses loopback, link-local, multicast, metadata and this
 * machine's own addresses; `deniedResolvedAddresses` adds the private ranges to it). An address or
 * name listed in `allowedDomains` stays reachable: listing it is the operator's explicit choice.
 */

export interface RuntimeTools {
  bwrap: string;
  socat: string;
  rg: string;
  /** The seccomp helper to start in place of the packaged one (a root launcher's, see hand-identity.ts). */
  applySeccomp?: string;
}

export function runtimeConfig(policy: SandboxPolicy, tools: RuntimeTools, vendorDir: string, opts: { terminateTls?: boolean } = {}): SandboxRuntimeConfig {
  return {
    network: {
      allowedDomains: policy.allowedDomains,
      deniedDomains: [],
      ...(policy.network === 'unrestricted' ? { deniedResolvedAddresses: [...DENIED_RANGES] } : {}),
      // A hand with secrets: its proxy terminates TLS with a CA of its own (generated per launcher,
      // so per hand, and trusted only inside this sandbox through the runtime's CA variables) to
      // put a secret in place of its placeholder, over verified TLS to the real host only.
      ...(opts.terminateTls ? { tlsTerminate: {} } : {}),
    },
    // An empty credentials block wires the runtime's injection seams; the launcher registers the values.
    ...(opts.terminateTls ? { credentials: {} } : {}),
    filesystem: {
      denyRead: policy.denyRead,
      allowRead: [...policy.allowRead, vendorDir],
      allowWrite: policy.allowWrite,
      // The runtime always adds /tmp/claude to the writable paths; shared by every hand, it would be
      // a channel between them, so it is denied (deny wins over allow).
      denyWrite: ['/tmp/claude'],
    },
    bwrapPath: tools.bwrap,
    ...(tools.applySeccomp ? { seccomp: { applyPath: tools.applySeccomp } } : {}),
    socatPath: tools.socat,
    ripgrep: { command: tools.rg },
  };
}

/** A host as the runtime's proxy dials it (`2130706433` and `127.1` are 127.0.0.1), or null when it is none. */
function canonicalHost(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  try {
    const h = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
    return (h.startsWith('[') ? h.slice(1, -1) : h).replace(/\.$/, '');
  } catch {
    return null;
  }
}

/**
 * What decides a host no configured rule matched: nothing (refused) for a limited hand; for an
 * unrestricted one, allowed unless it is an IP literal outside public address space in any
 * spelling, or a loopback name (`localhost`, `*.localhost`: the runtime lets those resolve to
 * loopback, by design, for whoever allowed them).
 */
export function askCallbackFor(policy: SandboxPolicy): SandboxAskCallback | undefined {
  if (policy.network !== 'unrestricted') return undefined;
  const refuse = (what: string) => Promise.resolve({ allow: false as const, reason: `${what} is reachable only when listed in the environment's allowed_hosts` });
  return ({ host }) => {
    const h = canonicalHost(host);
    if (h === null) return refuse('a malformed host');
    if (h === 'localhost' || h.endsWith('.localhost')) return refuse('a loopback name');
    if (!isIpLiteral(h)) return Promise.resolve(true);
    // This host's own interface addresses too, as for every connection made on a user's behalf (server/net).
    const why = refusedAddressClass(h);
    return why === null ? Promise.resolve(true) : refuse(why);
  };
}
