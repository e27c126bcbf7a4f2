import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OWNER, PROGRAM } from '~/server/access/testing/callers';
import { createCaller } from '~/server/api/root';
import { demoRuntimePerTest, rejection } from '~/server/api/testing/demo-runtime';
import { SAME_ORIGIN, httpApi } from '~/server/api/testing/http';
import { probeMcpServer } from '~/server/proxy/mcp-probe';
import { type BearerGate, startBearerGate } from '~/server/proxy/testing/bearer-gate';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';
import { MemorySecrets } from '~/server/proxy/testing/memory-secrets';

const TOKEN = 'canary-probe-bearer-3e7d1a';
const WRONG = 'canary-probe-wrong-9b2f44';

const runtime = demoRuntimePerTest('paddock-test-mcp-');
const api = () => createCaller({ runtime: runtime(), caller: OWNER });

let everything: EverythingServer;
const gates: BearerGate[] = [];
let logged: string[];

beforeAll(async () => {
  everything = await startEverythingServer();
}, 30_000);
afterAll(async () => {
  await everything.close();
});
afterEach(async () => {
  await Promise.all(gates.splice(0).map((g) => g.close()));
  vi.restoreAllMocks();
  for (const line of logged ?? []) for (const s of [TOKEN, WRONG]) expect(line).not.toContain(s);
  logged = [];
});

/** Every log line, to check none carries a credential. */
function captureLogs() {
  logged = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return write(chunk, ...(rest as []));
  });
}

async function gate(): Promise<BearerGate> {
  const g = await startBearerGate({ upstream: everything.base, token: TOKEN });
  gates.push(g);
  return g;
}

async function vaultWith(url: string, token: string): Promise<string> {
  const v = await runtime().vaults.createVault({ display_name: 'probe' });
  await runtime().vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: url, token } });
  return v.id;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('agents.testMcpServer (Test connection)', () => {
  it('lists the tools with the credential a vault holds for the URL, sent only to that URL', async () => {
    captureLogs();
    const g = await gate();
    const vault = await vaultWith(g.url, TOKEN);
    const r = await api().agents.testMcpServer({ url: g.url, vaultIds: [vault] });
    expect(r.status).toBe('ok');
    expect(r.status === 'ok' && r.tools).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(new Set(g.seenAuth)).toEqual(new Set([`Bearer ${TOKEN}`]));
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  }, 30_000);

  it('with no vaults named, uses the credential of any live vault', async () => {
    const g = await gate();
    await runtime().vaults.createVault({ display_name: 'empty' });
    await vaultWith(g.url, TOKEN);
    expect((await api().agents.testMcpServer({ url: g.url })).status).toBe('ok');
  }, 30_000);

  it('answers unauthorized without a credential, and with a wrong one, never echoing the credential', async () => {
    captureLogs();
    const g = await gate();
    const none = await api().agents.testMcpServer({ url: g.url, vaultIds: [] });
    expect(none).toEqual({ status: 'unauthorized', message: expect.stringContaining('no vault holds one') as unknown });
    const wrong = await vaultWith(g.url, WRONG);
    const refused = await api().agents.testMcpServer({ url: g.url, vaultIds: [wrong] });
    expect(refused).toEqual({ status: 'unauthorized', message: expect.stringContaining('refused the credential') as unknown });
    expect(JSON.stringify([none, refused])).not.toContain(WRONG);
    // And over HTTP as the page gets it: not in the raw answer either.
    const cookie = (await runtime().access.signIn(await runtime().access.newSigninToken(), { host: 'localhost:3000', secure: false }))!.setCookie.split(';')[0]!;
    const raw = await httpApi(runtime()).mutate('agents.testMcpServer', { url: g.url, vaultIds: [wrong] }, { ...SAME_ORIGIN, cookie });
    expect(raw.status).toBe(200);
    expect(raw.text).toContain('unauthorized');
    expect(raw.text).not.toContain(WRONG);
  }, 30_000);

  it('answers unreachable for a closed port, quickly', async () => {
    const began = Date.now();
    const r = await api().agents.testMcpServer({ url: `http://127.0.0.1:${await closedPort()}/mcp`, vaultIds: [] });
    expect(r).toEqual({ status: 'unreachable', message: expect.stringMatching(/could not be reached/) as unknown });
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('gives up on a server that accepts and never answers within the timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const began = Date.now();
      const r = await probeMcpServer(new MemorySecrets(), `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/mcp`, [], { timeoutMs: 500 });
      expect(r.status).toBe('unreachable');
      expect(Date.now() - began).toBeLessThan(3_000);
    } finally {
      silent.close();
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('refuses a URL that is not http(s) or carries credentials, and a vault that does not exist', async () => {
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'ftp://example.com/mcp', 'not a url']) {
      expect((await rejection(api().agents.testMcpServer({ url }))).code, url).toBe('BAD_REQUEST');
    }
    await expect(probeMcpServer(new MemorySecrets(), 'http://u:pw@127.0.0.1:1/mcp', [])).rejects.toThrow(/must not carry credentials/);
    expect((await rejection(api().agents.testMcpServer({ url: 'http://127.0.0.1:1/mcp', vaultIds: ['vlt_01NOSUCHVAULT'] }))).message).toContain('does not exist');
  });

  it('is the owner’s only: a program’s API key is refused', async () => {
    const e = await rejection(createCaller({ runtime: runtime(), caller: PROGRAM }).agents.testMcpServer({ url: 'http://127.0.0.1:1/mcp' }));
    expect(e.code).toBe('FORBIDDEN');
  });
});
