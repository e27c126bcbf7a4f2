import { describe, expect, it } from 'vitest';
import { normalizeEnvironmentConfig } from '~/lib/agent';
import { hostEntryMatch, networkAllows, sessionNetworkPolicy } from '~/lib/network-policy';

describe('a session network policy', () => {
  const limited = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['api.example.com', '*.cdn.example'], allow_package_managers: true } });
  const open = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'unrestricted' } });

  it("joins the server's hosts, the session's own allowed_domains and the environment's, once each", () => {
    const p = sessionNetworkPolicy({ serverHosts: ['server.example', 'api.example.com'], sessionMetadata: { allowed_domains: ' own.example, ,127.0.0.1' }, environment: limited, allowUnrestricted: true });
    expect(p.type).toBe('limited');
    expect(p.hosts.slice(0, 5)).toEqual(['server.example', 'api.example.com', 'own.example', '127.0.0.1', '*.cdn.example']);
    expect(p.hosts).toContain('registry.npmjs.org');
  });

  it('is unrestricted only when the environment asks and the server allows it', () => {
    expect(sessionNetworkPolicy({ serverHosts: [], sessionMetadata: {}, environment: open, allowUnrestricted: true })).toEqual({ type: 'unrestricted', hosts: [] });
    expect(sessionNetworkPolicy({ serverHosts: ['s'], sessionMetadata: undefined, environment: open, allowUnrestricted: false })).toEqual({ type: 'limited', hosts: ['s'] });
    expect(sessionNetworkPolicy({ serverHosts: [], sessionMetadata: undefined, environment: null, allowUnrestricted: true })).toEqual({ type: 'limited', hosts: [] });
  });

  it("matches hosts as the sandbox does: exact names, *. for subdomains only and never an IP, an optional port, any case", () => {
    expect(hostEntryMatch('api.example.com', 443, 'API.example.com')).toBe('exact');
    expect(hostEntryMatch('a.cdn.example', 443, '*.cdn.example')).toBe('wildcard');
    expect(hostEntryMatch('cdn.example', 443, '*.cdn.example')).toBeNull();
    expect(hostEntryMatch('evilcdn.example', 443, '*.cdn.example')).toBeNull();
    expect(hostEntryMatch('127.0.0.1', 80, '*.0.0.1')).toBeNull();
    expect(hostEntryMatch('127.0.0.1', 8080, '127.0.0.1:8080')).toBe('exact');
    expect(hostEntryMatch('127.0.0.1', 8081, '127.0.0.1:8080')).toBeNull();
    expect(hostEntryMatch('::1', 80, '::1')).toBe('exact');
    expect(hostEntryMatch('[::1]', 8080, '[::1]:8080')).toBe('exact');
  });

  it('lets a listed host through, says whether it is listed exactly, and lets anything through when unrestricted', () => {
    const p = { type: 'limited' as const, hosts: ['localhost', '*.example.com'] };
    expect(networkAllows(p, 'localhost', 80)).toEqual({ allowed: true, explicit: true });
    expect(networkAllows(p, 'a.example.com', 80)).toEqual({ allowed: true, explicit: false });
    expect(networkAllows(p, 'other.org', 80)).toEqual({ allowed: false, explicit: false });
    expect(networkAllows({ ...p, type: 'unrestricted' }, 'other.org', 80)).toEqual({ allowed: true, explicit: false });
  });
});
