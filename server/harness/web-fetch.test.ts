import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '~/lib/events';
import type { NetworkPolicy } from '~/lib/network-policy';
import { AgentToolsParams, type ToolConfig, normalizeTools, toolsetConfig } from '~/lib/toolset';
import type { Resolve } from '~/server/harness/pinned-get';
import { type WebFetchOptions, webFetch } from '~/server/harness/web-fetch';

let server: http.Server;
let base: string;
let port: number;
const seen: { path: string; headers: http.IncomingHttpHeaders }[] = [];

const PAGE = `<!doctype html><html><head><title>The &amp; Page</title><style>body { color: red }</style><script>window.secret = 1</script></head>
<body><h1>Hello</h1><p>Read <a href="/docs/next">the next page</a> and <a href="https://other.example/x">elsewhere</a>.</p>
<script>alert("no")</script><ul><li>one</li><li>two</li></ul></body></html>`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string | null, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { ...(type ? { 'content-type': type } : {}), ...headers });
      res.end(body);
    };
    switch (path) {
      case '/page.html':
        return send(200, 'text/html; charset=utf-8', PAGE);
      case '/text':
        return send(200, 'text/plain', 'plain words\n');
      case '/data.json':
        return send(200, 'application/json', '{"a":[1,2]}');
      case '/long':
        return send(200, 'text/plain', 'x'.repeat(1000));
      case '/huge':
        return send(200, 'text/plain', 'y'.repeat(100_000));
      case '/missing':
        return send(404, 'text/plain', 'no such page here');
      case '/image.png':
        return send(200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3]), { 'content-length': '11' });
      case '/stream.bin':
        return send(200, 'application/octet-stream', Buffer.from([0, 1, 2]));
      case '/untyped-binary':
        return send(200, null, Buffer.from([1, 0, 2, 0, 3]));
      case '/to-text':
        return send(302, 'text/plain', '', { location: '/text' });
      case '/to-elsewhere':
        return send(301, 'text/plain', '', { location: 'http://elsewhere.example/x' });
      case '/to-private':
        return send(307, 'text/plain', '', { location: `http://rebind.example.test:${port}/text` });
      case '/loop':
        return send(302, 'text/plain', '', { location: '/loop' });
      case '/slow':
        return; // never answers
      default:
        return send(404, 'text/plain', 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The web_fetch config an agent with these params gets (defaults filled in). */
function configOf(params: Record<string, unknown> = {}): ToolConfig {
  return toolsetConfig(normalizeTools(AgentToolsParams.parse([{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', ...params }] }])), 'web_fetch')!;
}

/** Names under example.test resolve to the local server's address (a DNS answer a test controls). */
const testResolve: Resolve = (host) => (host.endsWith('.example.test') ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })));

const LOCAL: NetworkPolicy = { type: 'limited', hosts: ['127.0.0.1'] };

function fetchUrl(url: string, o: Partial<WebFetchOptions> = {}): Promise<string> {
  return webFetch({ url }, { config: configOf(), network: LOCAL, events: [], callSeq: 1, signal: new AbortController().signal, resolve: testResolve, ...o });
}

describe('web_fetch', () => {
  it('fetches an HTML page as Markdown without its scripts and styles, the final URL and status first', async () => {
    const text = await fetchUrl(`${base}/page.html`);
    expect(text.split('\n').slice(0, 4)).toEqual([`URL: ${base}/page.html`, 'Status: 200 OK', 'Content-Type: text/html; charset=utf-8', 'Title: The & Page']);
    expect(text).toContain('# Hello');
    expect(text).toContain(`[the next page](${base}/docs/next)`);
    expect(text).toContain('[elsewhere](https://other.example/x)');
    expect(text).toMatch(/-\s+one\n-\s+two/);
    expect(text.match(/The & Page/g)).toHaveLength(1);
    for (const gone of ['window.secret', 'alert', 'color: red', '<h1>']) expect(text).not.toContain(gone);
    const req = seen.find((s) => s.path === '/page.html')!;
    expect(req.headers['user-agent']).toBe('Paddock-web_fetch/1');
    expect(req.headers.cookie).toBeUndefined();
    expect(req.headers.authorization).toBeUndefined();
  });

  it('returns text and JSON as they are', async () => {
    expect(await fetchUrl(`${base}/text`)).toMatch(/^URL: .*\/text\nStatus: 200 OK\nContent-Type: text\/plain\n\nplain words\n$/);
    expect(await fetchUrl(`${base}/data.json`)).toMatch(/\n\n\{"a":\[1,2\]\}$/);
  });

  it("refuses a host outside the session's network policy, naming it and saying to add it to allowed_hosts", async () => {
    await expect(fetchUrl(`${base}/text`, { network: { type: 'limited', hosts: [] } })).rejects.toThrow(/127\.0\.0\.1 is not a host this session may reach: add it to the environment's allowed_hosts/);
    await expect(fetchUrl('https://docs.example.org/', { network: { type: 'limited', hosts: ['example.org'] } })).rejects.toThrow(/docs\.example\.org is not a host this session may reach/);
  });

  it('refuses a host in the tool config\'s blocked_domains, subdomains included', async () => {
    const network: NetworkPolicy = { type: 'limited', hosts: ['a.example.test'] };
    await expect(fetchUrl(`http://a.example.test:${port}/text`, { network, config: configOf({ blocked_domains: ['example.test'] }) })).rejects.toThrow(/a\.example\.test is blocked by this agent's web_fetch blocked_domains \(example\.test\)/);
    expect(await fetchUrl(`http://a.example.test:${port}/text`, { network, config: configOf({ blocked_domains: ['b.example.test'] }) })).toContain('plain words');
  });

  it("fetches only hosts in the tool config's allowed_domains when it has them", async () => {
    const network: NetworkPolicy = { type: 'limited', hosts: ['a.example.test', 'b.example.test'] };
    const config = configOf({ allowed_domains: ['a.example.test'] });
    expect(await fetchUrl(`http://a.example.test:${port}/text`, { network, config })).toContain('plain words');
    await expect(fetchUrl(`http://b.example.test:${port}/text`, { network, config })).rejects.toThrow(/b\.example\.test is not in this agent's web_fetch allowed_domains \(a\.example\.test\)/);
  });

  it('refuses a private address unless the host is listed by its exact name or address', async () => {
    // Allowed by a wildcard only, the name resolves to loopback: refused.
    await expect(fetchUrl(`http://rebind.example.test:${port}/text`, { network: { type: 'limited', hosts: ['*.example.test'] } })).rejects.toThrow(
      /refused: rebind\.example\.test resolves to a loopback address\. Private, loopback and link-local addresses are fetched only from a host listed by its exact name/,
    );
    // Unrestricted: any public host, but not a loopback literal or a name that resolves to one.
    const open: NetworkPolicy = { type: 'unrestricted', hosts: [] };
    await expect(fetchUrl(`${base}/text`, { network: open })).rejects.toThrow(/refused: 127\.0\.0\.1 is a loopback address/);
    await expect(fetchUrl(`http://localhost:${port}/text`, { network: open, resolve: undefined })).rejects.toThrow(/refused: localhost resolves to a loopback address/);
    await expect(fetchUrl('http://[::ffff:10.0.0.1]/', { network: open })).rejects.toThrow(/is a private address/);
    // Listed exactly, it is fetched: from the address checked (the system resolver knows no such name).
    expect(await fetchUrl(`http://rebind.example.test:${port}/text`, { network: { type: 'limited', hosts: ['rebind.example.test'] } })).toContain('plain words');
  });

  /** This machine's first non-loopback IPv4 address (eth0's, say): public-looking, but this host. */
  const ownAddress = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).find((i) => i.family === 'IPv4' && !i.internal)?.address;

  it.skipIf(!ownAddress)("refuses this host's own interface address in an unrestricted environment, and the server there sees no request", async () => {
    const own = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('this host\n'));
    await new Promise<void>((resolve) => own.listen(0, ownAddress, resolve));
    let requests = 0;
    own.on('request', () => (requests += 1));
    try {
      const url = `http://${ownAddress}:${(own.address() as AddressInfo).port}/`;
      const open: NetworkPolicy = { type: 'unrestricted', hosts: [] };
      await expect(fetchUrl(url, { network: open })).rejects.toThrow(`refused: ${ownAddress} is an address of this host`);
      // A name that resolves to it, likewise.
      const resolve: Resolve = () => Promise.resolve([{ address: ownAddress!, family: 4 }]);
      await expect(fetchUrl(`http://me.example.test:${(own.address() as AddressInfo).port}/`, { network: open, resolve })).rejects.toThrow('me.example.test resolves to an address of this host');
      expect(requests).toBe(0);
      // Listed by its exact address, it is fetched (as a private address would be).
      expect(await fetchUrl(url, { network: { type: 'limited', hosts: [ownAddress!] } })).toContain('this host');
      expect(requests).toBe(1);
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  it('follows a redirect, checking every hop, and says where it came from', async () => {
    const text = await fetchUrl(`${base}/to-text`);
    expect(text.split('\n').slice(0, 4)).toEqual([`URL: ${base}/text`, 'Status: 200 OK', 'Content-Type: text/plain', `Redirected from: ${base}/to-text`]);
    await expect(fetchUrl(`${base}/to-elsewhere`)).rejects.toThrow(/elsewhere\.example is not a host this session may reach/);
    // The next hop's name resolves to loopback and is allowed only by a wildcard: refused there too.
    await expect(fetchUrl(`${base}/to-private`, { network: { type: 'limited', hosts: ['127.0.0.1', '*.example.test'] } })).rejects.toThrow(/rebind\.example\.test resolves to a loopback address/);
    await expect(fetchUrl(`${base}/loop`)).rejects.toThrow(/redirected more than 5 times/);
    expect(seen.filter((s) => s.path === '/loop')).toHaveLength(6);
  });

  it('truncates content past max_content_tokens, saying so', async () => {
    const text = await fetchUrl(`${base}/long`, { config: configOf({ max_content_tokens: 10 }) });
    expect(text).toContain(`\n\n${'x'.repeat(40)}\n\n[truncated: the content is 1000 characters; only the first 40 are shown (max_content_tokens 10)]`);
    expect(text).not.toContain('x'.repeat(41));
    expect(await fetchUrl(`${base}/long`)).toContain('x'.repeat(1000));
  });

  it('reads no more of a body than the cap', async () => {
    const text = await fetchUrl(`${base}/huge`, { maxBodyBytes: 1000 });
    expect(text).toContain('y'.repeat(1000));
    expect(text).not.toContain('y'.repeat(1001));
    expect(text).toContain('[the body is longer than 1000 bytes: only that much was read]');
  });

  it('answers a non-2xx status with an error naming the status', async () => {
    await expect(fetchUrl(`${base}/missing`)).rejects.toThrow(/^web_fetch: the server answered HTTP 404 Not Found\nURL: .*\/missing\nStatus: 404 Not Found\nContent-Type: text\/plain\n\nno such page here$/);
  });

  it('describes binary content by its type and size, never its bytes', async () => {
    expect(await fetchUrl(`${base}/image.png`)).toMatch(/\n\n\[image\/png content of 11 bytes, not shown: web_fetch returns text \(HTML, text, JSON, XML\) only\]$/);
    expect(await fetchUrl(`${base}/untyped-binary`)).toMatch(/\[untyped content of 5 bytes, not shown/);
    expect(await fetchUrl(`${base}/stream.bin`)).toMatch(/\[application\/octet-stream content of unstated size, not shown/);
  });

  it('refuses what is not an http(s) URL, and a URL with credentials', async () => {
    await expect(fetchUrl('file:///etc/passwd')).rejects.toThrow(/only http and https URLs are fetched, not file/);
    await expect(fetchUrl('not a url')).rejects.toThrow(/not a URL/);
    await expect(fetchUrl(`http://user:pw@127.0.0.1:${port}/text`)).rejects.toThrow(/credentials/);
    await expect(webFetch({ href: 'x' }, { config: configOf(), network: LOCAL, events: [], callSeq: 1, signal: new AbortController().signal })).rejects.toThrow(/web_fetch: invalid input: url:/);
  });

  it('gives up on a server that does not answer in time', async () => {
    await expect(fetchUrl(`${base}/slow`, { timeoutMs: 300 })).rejects.toThrow(/\/slow did not answer within 300 ms/);
  });

  it("with url_sources user_input none, refuses a URL found only in a user message and fetches one a custom tool's result showed", async () => {
    const url = `${base}/text`;
    const config = configOf({ url_sources: { user_input: 'none' } });
    const events = [
      { type: 'user.message', content: [{ type: 'text', text: `fetch ${url}` }] },
      { type: 'agent.custom_tool_use', name: 'lookup', input: {}, model_tool_use_id: 'toolu_1' },
      { type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_2', content: [{ type: 'text', text: `found ${base}/data.json` }] },
    ].map((p, i) => ({ ...(p as NewEvent), id: `sevt_${i + 1}`, session_id: 'sesn_t', seq: i + 1, processed_at: new Date(0).toISOString() }));
    const before = seen.length;
    await expect(fetchUrl(url, { config, events, callSeq: 9 })).rejects.toThrow(/refused .*\/text: the URL does not appear in any source this agent lets web_fetch take URLs from \(url_sources: user_input none/);
    expect(seen.length).toBe(before); // nothing was requested
    expect(await fetchUrl(`${base}/data.json`, { config, events, callSeq: 9 })).toContain('{"a":[1,2]}');
  });
});
