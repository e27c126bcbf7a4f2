import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type OutboundPolicy, OutboundRefusedError, defaultOutboundPolicy, outboundAddress, outboundFetch } from '~/server/net/outbound';

let server: http.Server;
let port: number;
let requests: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/moved') return void res.writeHead(302, { location: '/here' }).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'x-seen-type': req.headers['content-type'] ?? '' }).end(`${req.method} ${body}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const at = (address: string): OutboundPolicy['resolve'] => () => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);

describe('the outbound address policy', () => {
  it.each([
    ['loopback', 'http://127.0.0.1/'],
    ['loopback as IPv6', 'http://[::1]/'],
    ['loopback as IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]/'],
    ['the metadata address', 'http://169.254.169.254/'],
    ['a private address', 'https://10.1.2.3/'],
    ['a unique-local address', 'https://[fd12::1]/'],
    ['the unspecified address', 'http://0.0.0.0/'],
  ])('refuses %s, naming the host only', async (_what, url) => {
    const e = await outboundAddress(new URL(url), { allow: [] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OutboundRefusedError);
    expect((e as Error).message).toMatch(/^\S+ was refused by the network policy/);
    expect((e as Error).message).not.toMatch(/loopback|private|link-local/);
  });

  it('refuses a name that resolves to a private address, and connects a public one to the address it checked', async () => {
    await expect(outboundAddress(new URL('https://rebind.example/'), { allow: [], resolve: at('127.0.0.1') })).rejects.toThrow('rebind.example was refused by the network policy');
    await expect(outboundAddress(new URL('https://ok.example/'), { allow: [], resolve: at('93.184.215.14') })).resolves.toEqual({ address: '93.184.215.14', family: 4 });
  });

  it('trusts what the operator lists: a name, an address (also as what a name resolves to), each on its port if it has one', async () => {
    const u = (s: string) => new URL(s);
    await expect(outboundAddress(u('http://localhost:8080/'), { allow: ['localhost:8080'], resolve: at('127.0.0.1') })).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(outboundAddress(u('http://localhost:8081/'), { allow: ['localhost:8080'], resolve: at('127.0.0.1') })).rejects.toThrow(OutboundRefusedError);
    await expect(outboundAddress(u('http://mcp.lan/'), { allow: ['10.0.0.5'], resolve: at('10.0.0.5') })).resolves.toMatchObject({ address: '10.0.0.5' });
    await expect(outboundAddress(u('http://mcp.lan/'), { allow: ['10.0.0.5'], resolve: at('10.0.0.6') })).rejects.toThrow(OutboundRefusedError);
    await expect(outboundAddress(u('http://[::ffff:127.0.0.1]:9/'), { allow: ['127.0.0.1:9'] })).resolves.toBeDefined();
    await expect(outboundAddress(u('https://git.corp.example/'), { allow: ['*.corp.example'], resolve: at('192.168.1.9') })).resolves.toBeDefined();
  });

  it('reads PADDOCK_OUTBOUND_ALLOW each time, dropping malformed entries', () => {
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', ' 127.0.0.1:80 , *, localhost');
    expect(defaultOutboundPolicy().allow).toEqual(['127.0.0.1:80', 'localhost']);
    vi.unstubAllEnvs();
  });
});

describe('outboundFetch', () => {
  const trusted: OutboundPolicy = { allow: ['127.0.0.1'] };

  it('sends to the checked address only, whatever the name resolves to when the socket connects', async () => {
    // The policy's resolver answers once; the system resolver, which knows no pinned.example, is never asked.
    let lookups = 0;
    const resolve: OutboundPolicy['resolve'] = () => {
      lookups += 1;
      return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    };
    const res = await outboundFetch({ allow: ['pinned.example'], resolve })(`http://pinned.example:${port}/x`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect([res.status, await res.text(), res.headers.get('x-seen-type')]).toEqual([200, 'POST a=1', 'application/x-www-form-urlencoded;charset=UTF-8']);
    expect(lookups).toBe(1);
  });

  it('refuses before connecting when the policy says no', async () => {
    requests = [];
    await expect(outboundFetch({ allow: [] })(`http://127.0.0.1:${port}/`)).rejects.toThrow(OutboundRefusedError);
    expect(requests).toEqual([]);
  });

  it('never follows a redirect: an error under redirect "error", the 3xx itself otherwise', async () => {
    requests = [];
    await expect(outboundFetch(trusted)(`http://127.0.0.1:${port}/moved`, { redirect: 'error' })).rejects.toThrow('fetch failed');
    const res = await outboundFetch(trusted)(`http://127.0.0.1:${port}/moved`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, '/here']);
    expect(requests).toEqual(['GET /moved', 'GET /moved']);
  });

  it('rejects as fetch does for a closed port, and with the reason for an aborted signal', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const p = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const e = await outboundFetch(trusted)(`http://127.0.0.1:${p}/`).catch((x: unknown) => x as Error);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as Error & { cause: { code: string } }).cause.code).toBe('ECONNREFUSED');
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(outboundFetch(trusted)(`http://127.0.0.1:${port}/`, { signal: ac.signal })).rejects.toThrow('stop');
  });

  it('gives up on a resolver that never answers when the signal aborts', async () => {
    const never: OutboundPolicy = { allow: [], resolve: () => new Promise(() => undefined) };
    await expect(outboundFetch(never)('https://slow.example/', { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
