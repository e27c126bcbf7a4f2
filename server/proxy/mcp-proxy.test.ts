import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SessionAgent } from '~/lib/agent';
import { normalizeTools } from '~/lib/toolset';
import { McpUpstreamError } from '~/server/proxy/mcp-gateway';
import { McpProxy } from '~/server/proxy/mcp-proxy';
import { MCP_PROXY_AUDIENCE, SessionTokenError, mintSessionToken, proxySigningKey } from '~/server/proxy/session-token';
import { type BearerGate, startBearerGate } from '~/server/proxy/testing/bearer-gate';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';
import { MemorySecrets } from '~/server/proxy/testing/memory-secrets';
import { probeMcpServer } from '~/server/proxy/mcp-probe';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

const STATIC = 'canary-static-bearer-7f3a9c';
const EXPIRED_ACCESS = 'canary-expired-access-51d2';
const REFRESH = 'canary-refresh-token-88e1';
const CLIENT_SECRET = 'canary-client-secret-0b4c';

let everything: EverythingServer;
let dir: string;
let store: SqliteSessionStore;
let secrets: MemorySecrets;
let proxy: McpProxy;
let key: Uint8Array;
const gates: BearerGate[] = [];
let logged: string[];
let refreshFailures: Array<{ credentialId: string; vaultId: string }>;

beforeAll(async () => {
  everything = await startEverythingServer();
}, 30_000);
afterAll(async () => {
  await everything.close();
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mcp-proxy-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  secrets = new MemorySecrets();
  const signingKey = proxySigningKey(store.db);
  key = await signingKey();
  refreshFailures = [];
  proxy = new McpProxy({ secrets, sessions: store, signingKey, connectTimeoutMs: 5_000, callTimeoutMs: 10_000, onRefreshFailed: (c) => refreshFailures.push(c) });
  // Every log line at every level, to check none carries a secret.
  logged = [];
  vi.stubEnv('PADDOCK_LOG_LEVEL', 'debug');
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return write(chunk, ...(rest as []));
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await Promise.all(gates.splice(0).map((g) => g.close()));
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const line of logged) for (const s of [STATIC, EXPIRED_ACCESS, REFRESH, CLIENT_SECRET]) expect(line).not.toContain(s);
});

async function gate(o: Omit<Parameters<typeof startBearerGate>[0], 'upstream'>): Promise<BearerGate> {
  const g = await startBearerGate({ upstream: everything.base, ...o });
  gates.push(g);
  return g;
}

function agentWith(servers: Array<{ name: string; url: string }>): SessionAgent {
  return {
    id: 'agent_mcp', type: 'agent', version: 1, name: 'mcp', description: null, model: { id: 'm' }, system: null,
    tools: normalizeTools(servers.map((s) => ({ type: 'mcp_toolset' as const, mcp_server_name: s.name }))),
    mcp_servers: servers.map((s) => ({ type: 'url' as const, ...s })),
    skills: [], execution_identity: null, multiagent: null,
  };
}

async function sessionWith(servers: Array<{ name: string; url: string }>, vaultIds = ['vlt_a']): Promise<string> {
  const s = await store.createSession({ agent: agentWith(servers), vault_ids: vaultIds });
  return s.id;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function failure(p: Promise<unknown>): Promise<Error> {
  const r = await p.then(() => null, (e: unknown) => e as Error);
  if (r === null) throw new Error('expected a failure');
  return r;
}

function expectClean(e: Error) {
  for (const s of [STATIC, EXPIRED_ACCESS, REFRESH, CLIENT_SECRET]) expect(`${e.message} ${e.stack ?? ''}`).not.toContain(s);
}

describe('the MCP proxy against server-everything behind a bearer gate', () => {
  it('lists the tools and calls echo with the static bearer from the session’s vault', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const tools = await proxy.listTools(await mintSessionToken(key, id), 'everything');
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(tools.find((t) => t.name === 'echo')).toMatchObject({ description: expect.stringMatching(/echo/i) as unknown, input_schema: { type: 'object', properties: { message: { type: 'string' } } } });
    const res = await proxy.callTool(await mintSessionToken(key, id), 'everything', 'echo', { message: 'hello through the gate' });
    expect(res).toEqual({ content: [{ type: 'text', text: 'Echo: hello through the gate' }], isError: false });
    expect(new Set(g.seenAuth)).toEqual(new Set([`Bearer ${STATIC}`]));
  }, 30_000);

  it('scrubs the credential from a result when the upstream echoes it back', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const res = await proxy.callTool(await mintSessionToken(key, id), 'everything', 'echo', { message: `my header was ${STATIC}` });
    expect(res.content).toEqual([{ type: 'text', text: 'Echo: my header was [redacted]' }]);
  }, 30_000);

  it('a call that outlasts the call timeout is a connection error naming the server, and the client is closed', async () => {
    const slow = new McpProxy({ secrets, sessions: store, signingKey: proxySigningKey(store.db), connectTimeoutMs: 5_000, callTimeoutMs: 300 });
    const id = await sessionWith([{ name: 'everything', url: `${everything.base}/mcp` }]);
    const began = Date.now();
    const e = await failure(slow.callTool(await mintSessionToken(key, id), 'everything', 'trigger-long-running-operation', { duration: 5, steps: 5 }));
    expect(e).toMatchObject({ kind: 'connection', server: 'everything' });
    expect(e.message).toMatch(/in time/);
    expect(Date.now() - began).toBeLessThan(4_000);
  }, 30_000);

  it('takes the first vault (in the session’s order) holding a credential for the URL', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_b', g.url, { credentialId: 'vcrd_2', vaultId: 'vlt_b', type: 'static_bearer', token: STATIC });
    secrets.put('vlt_c', g.url, { credentialId: 'vcrd_3', vaultId: 'vlt_c', type: 'static_bearer', token: 'not-this-one' });
    const id = await sessionWith([{ name: 'everything', url: g.url }], ['vlt_a', 'vlt_b', 'vlt_c']);
    expect((await proxy.callTool(await mintSessionToken(key, id), 'everything', 'get-sum', { a: 2, b: 3 })).content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('5') as unknown });
  }, 30_000);

  it('a wrong token is an authentication error naming the server, without the token', async () => {
    const g = await gate({ token: 'the-right-one' });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const e = await failure(proxy.callTool(await mintSessionToken(key, id), 'everything', 'echo', { message: 'x' }));
    expect(e).toBeInstanceOf(McpUpstreamError);
    expect(e).toMatchObject({ kind: 'authentication', server: 'everything' });
    expect(e.message).toMatch(/"everything".*401/);
    expectClean(e);
    expect(logged.some((l) => l.includes('mcp upstream failed') && l.includes('authentication'))).toBe(true);
  }, 30_000);

  it('no credential in the vaults: the call goes out without one (and the gate refuses it)', async () => {
    const g = await gate({ token: STATIC });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const e = await failure(proxy.listTools(await mintSessionToken(key, id), 'everything'));
    expect(e).toMatchObject({ kind: 'authentication', server: 'everything' });
    expect(g.seenAuth.every((h) => h === '')).toBe(true);
    // The server without a gate is listed without a credential.
    const open = await sessionWith([{ name: 'open', url: `${everything.base}/mcp` }]);
    expect((await proxy.listTools(await mintSessionToken(key, open), 'open')).length).toBeGreaterThan(5);
  }, 30_000);

  it('a closed port is a connection error naming the server', async () => {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise((resolve) => s.close(resolve));
    secrets.put('vlt_a', `http://127.0.0.1:${port}/mcp`, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'gone', url: `http://127.0.0.1:${port}/mcp` }]);
    const e = await failure(proxy.listTools(await mintSessionToken(key, id), 'gone'));
    expect(e).toMatchObject({ kind: 'connection', server: 'gone' });
    expect(e.message).toContain('"gone"');
    expectClean(e);
  }, 30_000);

  it.each(['none', 'client_secret_basic', 'client_secret_post'] as const)(
    'refreshes an expired mcp_oauth token once (client auth %s), saves it, and the old one no longer works upstream',
    async (auth) => {
      const g = await gate({ token: 'unknown-until-refreshed', refreshToken: REFRESH, client: { id: 'paddock-client', secret: CLIENT_SECRET, auth } });
      secrets.put('vlt_a', g.url, {
        credentialId: 'vcrd_oauth', vaultId: 'vlt_a', type: 'mcp_oauth', accessToken: EXPIRED_ACCESS, expiresAt: new Date(Date.now() - 60_000).toISOString(),
        refresh: { clientId: 'paddock-client', refreshToken: REFRESH, tokenEndpoint: g.tokenEndpoint, tokenEndpointAuth: auth === 'none' ? { type: 'none' } : { type: auth, clientSecret: CLIENT_SECRET }, resource: g.url, scope: 'tools' },
      });
      const id = await sessionWith([{ name: 'everything', url: g.url }]);
      const res = await proxy.callTool(await mintSessionToken(key, id), 'everything', 'echo', { message: 'fresh' });
      expect(res.content).toEqual([{ type: 'text', text: 'Echo: fresh' }]);
      expect(g.tokenRequests).toHaveLength(1);
      expect(g.tokenRequests[0]!.form).toMatchObject({ grant_type: 'refresh_token', refresh_token: REFRESH, resource: g.url, scope: 'tools' });
      // Saved: the in-memory vault holds the new access token and the rotated refresh token.
      expect(secrets.saved).toEqual([{ credentialId: 'vcrd_oauth', accessToken: g.token, expiresAt: expect.any(String) as unknown, refreshToken: g.refreshToken }]);
      // The expired token was never sent (refreshed before the call), and no longer works upstream.
      expect(g.seenAuth).not.toContain(`Bearer ${EXPIRED_ACCESS}`);
      const stale = await fetch(g.url, { method: 'POST', headers: { authorization: `Bearer ${EXPIRED_ACCESS}`, 'content-type': 'application/json' }, body: '{}' });
      expect(stale.status).toBe(401);
      // The next call uses the saved token, no refresh.
      await proxy.callTool(await mintSessionToken(key, id), 'everything', 'echo', { message: 'again' });
      expect(g.tokenRequests).toHaveLength(1);
      // Logged (so the no-secret check over log lines in afterEach has lines to look at).
      expect(logged.some((l) => l.includes('mcp oauth token refreshed') && l.includes('vcrd_oauth'))).toBe(true);
    },
    30_000,
  );

  it('an upstream 401 with a refresh configured is refreshed once and retried; a refresh refused is an authentication error', async () => {
    const g = await gate({ token: 'only-after-refresh', refreshToken: REFRESH });
    const refresh = { clientId: 'c', refreshToken: REFRESH, tokenEndpoint: g.tokenEndpoint, tokenEndpointAuth: { type: 'none' as const }, resource: null, scope: null };
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_o', vaultId: 'vlt_a', type: 'mcp_oauth', accessToken: EXPIRED_ACCESS, expiresAt: null, refresh });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    expect((await proxy.listTools(await mintSessionToken(key, id), 'everything')).length).toBeGreaterThan(5);
    expect(g.seenAuth[0]).toBe(`Bearer ${EXPIRED_ACCESS}`);
    expect(g.tokenRequests).toHaveLength(1);
    expect(refreshFailures).toEqual([]);

    // A refresh token the endpoint does not know: one refresh attempt, then an authentication error.
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_o', vaultId: 'vlt_a', type: 'mcp_oauth', accessToken: EXPIRED_ACCESS, expiresAt: null, refresh });
    const e = await failure(proxy.listTools(await mintSessionToken(key, id), 'everything'));
    expect(e).toMatchObject({ kind: 'authentication', server: 'everything' });
    expect(g.tokenRequests).toHaveLength(2);
    // Told once, by ids (the runtime sends vault_credential.refresh_failed).
    expect(refreshFailures).toEqual([{ credentialId: 'vcrd_o', vaultId: 'vlt_a' }]);
    expectClean(e);
  }, 30_000);

  it('a token for session A cannot reach a server of session B’s agent', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_b', g.url, { credentialId: 'vcrd_b', vaultId: 'vlt_b', type: 'static_bearer', token: STATIC });
    const a = await sessionWith([{ name: 'public', url: `${everything.base}/mcp` }], ['vlt_a']);
    await sessionWith([{ name: 'private', url: g.url }], ['vlt_b']);
    const e = await failure(proxy.callTool(await mintSessionToken(key, a), 'private', 'echo', { message: 'x' }));
    expect(e.message).toMatch(/"private" is not one of this session's servers/);
    expect(g.seenAuth).toEqual([]);
  }, 30_000);

  it('refuses an expired, wrong-audience, other-key, alg:none, tampered or too long-lived token before reaching upstream', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const now = Math.floor(Date.now() / 1000);
    const sign = (k: Uint8Array, claims: { aud?: string; iat?: number; exp?: number; sub?: string }) =>
      new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(claims.sub ?? id).setAudience(claims.aud ?? MCP_PROXY_AUDIENCE).setIssuedAt(claims.iat ?? now).setExpirationTime(claims.exp ?? now + 60).sign(k);
    const good = await mintSessionToken(key, id);
    const [h, p, s] = good.split('.');
    const otherSub = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 'sesn_someoneelse' })).toString('base64url');
    const bad = {
      expired: await sign(key, { iat: now - 100, exp: now - 10 }),
      audience: await sign(key, { aud: 'paddock:something-else' }),
      otherKey: await sign(new Uint8Array(32).fill(7), {}),
      none: new UnsecuredJWT({}).setSubject(id).setAudience(MCP_PROXY_AUDIENCE).setIssuedAt().setExpirationTime('60s').encode(),
      tampered: `${h}.${otherSub}.${s}`,
      longLived: await sign(key, { exp: now + 3600 }),
    };
    for (const [why, token] of Object.entries(bad)) {
      const e = await failure(proxy.callTool(token, 'everything', 'echo', { message: 'x' }));
      expect(e, why).toBeInstanceOf(SessionTokenError);
    }
    expect(g.seenAuth).toEqual([]);
    // The good one works.
    expect((await proxy.callTool(good, 'everything', 'echo', { message: 'ok' })).isError).toBe(false);
  }, 30_000);

  it('the signing key is one row shared by every instance, apart from the cookie key', async () => {
    const again = await proxySigningKey(store.db)();
    expect(Buffer.from(again).equals(Buffer.from(key))).toBe(true);
    const rows = await store.db.selectFrom('server_secrets').select('name').execute();
    expect(rows.map((r) => r.name)).toContain('mcp_proxy_signing_key');
  });
});

describe('the MCP proxy under the outbound address policy', () => {
  /** The proxy as the server runs it when the operator trusts nothing: loopback is refused. */
  const strict = () => new McpProxy({ secrets, sessions: store, signingKey: proxySigningKey(store.db), connectTimeoutMs: 5_000, callTimeoutMs: 10_000, outbound: { allow: [] } });

  it('refuses an agent’s MCP server on loopback with "refused by the network policy", and the listening server sees no request', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'local', url: g.url }]);
    // Each call made only when awaited: a rejection that waits for its handler behind another
    // await is an unhandled rejection (it failed CI once).
    const calls = [async () => strict().listTools(await mintSessionToken(key, id), 'local'), async () => strict().callTool(await mintSessionToken(key, id), 'local', 'echo', { message: 'x' })];
    for (const call of calls) {
      const e = await failure(call());
      expect(e).toMatchObject({ kind: 'connection', server: 'local' });
      expect(e.message).toContain('127.0.0.1 was refused by the network policy');
      // Nothing about what answers there: no status, no body.
      expect(e.message).not.toMatch(/HTTP|401|invalid_token/);
      expectClean(e);
    }
    expect(g.seenAuth).toEqual([]);
  }, 30_000);

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://metadata.test.invalid/'])('refuses an MCP server at the instance-metadata address (%s)', async (url) => {
    const resolve = () => Promise.resolve([{ address: '169.254.169.254', family: 4 as const }]);
    const proxy = new McpProxy({ secrets, sessions: store, signingKey: proxySigningKey(store.db), connectTimeoutMs: 5_000, outbound: { allow: [], resolve } });
    const id = await sessionWith([{ name: 'meta', url }]);
    const began = Date.now();
    const e = await failure(proxy.listTools(await mintSessionToken(key, id), 'meta'));
    expect(e).toMatchObject({ kind: 'connection', server: 'meta' });
    expect(e.message).toContain('was refused by the network policy');
    expect(e.message).not.toContain('169.254.169.254 is');
    // Refused before any connect, not after a timeout.
    expect(Date.now() - began).toBeLessThan(2_000);
  }, 30_000);

  it('refuses an OAuth token endpoint on loopback when only the MCP server is trusted: no token request is made', async () => {
    const g = await gate({ token: 'unknown-until-refreshed', refreshToken: REFRESH });
    const endpoint = await gate({ token: 'x', refreshToken: REFRESH });
    secrets.put('vlt_a', g.url, {
      credentialId: 'vcrd_oauth', vaultId: 'vlt_a', type: 'mcp_oauth', accessToken: EXPIRED_ACCESS, expiresAt: new Date(Date.now() - 60_000).toISOString(),
      refresh: { clientId: 'c', refreshToken: REFRESH, tokenEndpoint: endpoint.tokenEndpoint, tokenEndpointAuth: { type: 'none' }, resource: null, scope: null },
    });
    const id = await sessionWith([{ name: 'everything', url: g.url }]);
    const proxy = new McpProxy({ secrets, sessions: store, signingKey: proxySigningKey(store.db), outbound: { allow: [new URL(g.url).host] } });
    const e = await failure(proxy.listTools(await mintSessionToken(key, id), 'everything'));
    expect(e).toMatchObject({ kind: 'connection', detail: { stage: 'refresh' } });
    expect(e.message).toContain('OAuth token endpoint 127.0.0.1 was refused by the network policy');
    expect(endpoint.tokenRequests).toEqual([]);
    expect(secrets.saved).toEqual([]);
    expectClean(e);
  }, 30_000);

  it('PADDOCK_OUTBOUND_ALLOW lets the listed loopback server through, and only on the listed port', async () => {
    const g = await gate({ token: STATIC });
    secrets.put('vlt_a', g.url, { credentialId: 'vcrd_1', vaultId: 'vlt_a', type: 'static_bearer', token: STATIC });
    const id = await sessionWith([{ name: 'local', url: g.url }]);
    const port = Number(new URL(g.url).port);
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', `127.0.0.1:${port}`);
    const res = await proxy.callTool(await mintSessionToken(key, id), 'local', 'echo', { message: 'trusted' });
    expect(res.content).toEqual([{ type: 'text', text: 'Echo: trusted' }]);
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', `localhost,127.0.0.1:${port + 1}`);
    const before = g.seenAuth.length;
    const e = await failure(proxy.callTool(await mintSessionToken(key, id), 'local', 'echo', { message: 'not trusted' }));
    expect(e.message).toContain('refused by the network policy');
    expect(g.seenAuth).toHaveLength(before);
  }, 30_000);

  it('"Test connection" (mcp-probe) refuses a loopback URL the same way, without dialling it', async () => {
    const g = await gate({ token: STATIC });
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', '');
    expect(await probeMcpServer(secrets, g.url, [])).toEqual({ status: 'unreachable', message: expect.stringContaining('127.0.0.1 was refused by the network policy') as unknown });
    expect(g.seenAuth).toEqual([]);
  }, 30_000);
});
