import { SandboxRuntimeConfigSchema } from '@anthropic-ai/sandbox-runtime';
import { describe, expect, it } from 'vitest';
import { sandboxPolicy } from '~/server/hands/sandbox/policy';
import { askCallbackFor, runtimeConfig } from '~/server/hands/sandbox/runtime-config';
import { hostAddresses } from '~/server/net/address-policy';

const tools = { bwrap: '/usr/bin/bwrap', socat: '/usr/bin/socat', rg: '/usr/bin/rg' };
const policy = (network?: 'limited' | 'unrestricted') => sandboxPolicy({ workspace: '/tmp/w', dataDir: '/tmp/d', allowedDomains: ['api.example.com', '127.0.0.1'], ...(network ? { network } : {}) });

describe("a hand's policy as the sandbox runtime's config", () => {
  it('gives a limited hand its allowlist and nothing that decides other hosts (they are refused)', () => {
    const c = runtimeConfig(policy(), tools, '/vendor');
    expect(c.network).toEqual({ allowedDomains: ['api.example.com', '127.0.0.1'], deniedDomains: [] });
    expect(askCallbackFor(policy())).toBeUndefined();
    expect(() => SandboxRuntimeConfigSchema.parse(c)).not.toThrow();
  });

  it('lets an unrestricted hand reach any host but an IP literal in private space, and adds the private ranges to the resolved-address guard', async () => {
    const p = policy('unrestricted');
    const c = runtimeConfig(p, tools, '/vendor');
    expect(c.network.allowedDomains).toEqual(['api.example.com', '127.0.0.1']);
    expect(c.network.deniedResolvedAddresses).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', 'fc00::/7', '::1/128']));
    // The runtime's own schema takes it (no `*` in allowedDomains, valid ranges).
    expect(() => SandboxRuntimeConfigSchema.parse(c)).not.toThrow();
    const ask = askCallbackFor(p)!;
    expect(await ask({ host: 'docs.python.org', port: 443 })).toBe(true);
    expect(await ask({ host: '93.184.216.34', port: 80 })).toBe(true);
    expect(await ask({ host: '127.0.0.1', port: 80 })).toEqual({ allow: false, reason: "a loopback address is reachable only when listed in the environment's allowed_hosts" });
    expect(await ask({ host: '10.1.2.3', port: 80 })).toMatchObject({ allow: false, reason: expect.stringMatching(/^a private address/) as unknown });
    expect(await ask({ host: '[::1]', port: 80 })).toMatchObject({ allow: false });
    expect(await ask({ host: '169.254.169.254', port: 80 })).toMatchObject({ allow: false });
    // Other spellings of an address are judged as the address the proxy dials.
    for (const host of ['2130706433', '127.1', '0x7f.0.0.1', '[::ffff:127.0.0.1]', '0:0:0:0:0:0:0:1']) expect(await ask({ host, port: 80 })).toMatchObject({ allow: false });
    // The runtime lets loopback names resolve to loopback: refused unless listed.
    for (const host of ['localhost', 'LOCALHOST.', 'app.localhost']) expect(await ask({ host, port: 80 })).toMatchObject({ allow: false, reason: expect.stringMatching(/^a loopback name/) as unknown });
  });

  it("refuses an unrestricted hand this host's own interface addresses, as web_fetch and the proxies do", async () => {
    const own = hostAddresses().filter((a) => !a.startsWith('127.') && a !== '::1' && !a.startsWith('fe80'));
    if (own.length === 0) return; // a machine with loopback only has nothing more to refuse
    const ask = askCallbackFor(policy('unrestricted'))!;
    for (const a of own) {
      const host = a.includes(':') ? `[${a}]` : a;
      // Refused whatever else it is (a unique-local one already was; a public-looking one, such as a
      // TEST-NET address here, was let through before).
      expect(await ask({ host, port: 80 }), host).toMatchObject({ allow: false });
    }
  });
});
