import 'server-only';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import { errorFields, logger } from '~/server/log';
import { type OutboundPolicy, isOutboundRefused, outboundAddress, outboundRequest } from '~/server/net/outbound';
import type { RepositoryStore } from '~/server/proxy/repository-store';

const log = logger('git-proxy');

/** The smart HTTP endpoints git uses, and nothing else. */
const SERVICES = ['git-upload-pack', 'git-receive-pack'] as const;
/** Request headers git sends that upstream needs; everything else (Authorization, Cookie, …) is dropped. */
const REQUEST_HEADERS = ['accept', 'accept-encoding', 'content-type', 'content-encoding', 'content-length', 'git-protocol', 'user-agent'];
/** Response headers passed back; never Set-Cookie, WWW-Authenticate or Location. */
const RESPONSE_HEADERS = ['content-type', 'content-encoding', 'content-length', 'cache-control', 'expires', 'pragma'];

export interface GitProxyOptions {
  repositories: Pick<RepositoryStore, 'resolveCapability' | 'token'>;
  /** Loopback port (`PADDOCK_GIT_PROXY_PORT`); 0 or absent: an ephemeral one. */
  port?: number;
  /** Extra CA certificates upstream may present (tests: a self-signed local git server). */
  upstreamCa?: string | Buffer;
  /** Where repository hosts may be: default the server's address policy (`PADDOCK_OUTBOUND_ALLOW`). */
  outbound?: OutboundPolicy;
}

/** The part of a repository URL the proxy URL repeats, without a trailing slash or `.git`. */
function repoPath(url: string): string {
  return new URL(url).pathname.replace(/\/+$/, '').replace(/\.git$/i, '');
}

interface Parsed {
  capability: string;
  prefix: string;
  suffix: string;
  service: (typeof SERVICES)[number];
}

/** `/<capability>/<repo path>/{info/refs?service=…|git-upload-pack|git-receive-pack}`, or null. */
export function parseProxyPath(method: string, rawUrl: string): Parsed | null {
  let u: URL;
  try {
    u = new URL(rawUrl, 'http://proxy');
  } catch {
    return null;
  }
  const m = /^\/([A-Za-z0-9_-]{43})(\/.*)$/.exec(u.pathname);
  if (!m) return null;
  const [, capability, rest] = m as unknown as [string, string, string];
  if (method === 'GET' && rest.endsWith('/info/refs')) {
    const service = u.searchParams.get('service');
    const keys = [...u.searchParams.keys()];
    if (keys.length !== 1 || !SERVICES.includes(service as Parsed['service'])) return null;
    return { capability, prefix: rest.slice(0, -'/info/refs'.length), suffix: `/info/refs?service=${service}`, service: service as Parsed['service'] };
  }
  if (method === 'POST' && u.search === '') {
    for (const service of SERVICES) {
      if (rest.endsWith(`/${service}`)) return { capability, prefix: rest.slice(0, -(service.length + 1)), suffix: `/${service}`, service };
    }
  }
  return null;
}

/**
 * The git proxy: smart HTTP between a hand and a repository's host, on its own loopback port so
 * a sandboxed hand may reach it and nothing else of the server. The hand's remote is
 * `http://127.0.0.1:<port>/<capability>/<repo path>`; the proxy resolves the capability (hashed,
 * bound to one session, resource and hand; unknown or revoked: 404, nothing told), opens the
 * resource's token for this request only, drops whatever credentials the hand sent, adds the
 * token as GitHub takes it (Basic `x-access-token:<token>`), and streams both ways (packs are
 * never buffered; a gzip request body passes as is). Redirects are not followed.
 */
export class GitProxy {
  readonly #opts: GitProxyOptions;
  #server: http.Server | null = null;
  #port = 0;

  constructor(opts: GitProxyOptions) {
    this.#opts = opts;
  }

  get port(): number {
    if (!this.#server) throw new Error('git proxy not started');
    return this.#port;
  }

  /** `127.0.0.1:<port>`: the one entry a session's sandbox allowlist gets for it. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * The remote URL a hand gets for a repository: the capability, never the token. The address is
   * 127.0.0.1 spelled as IPv4-mapped IPv6: sandbox-runtime puts `127.0.0.1` in the hand's NO_PROXY
   * (git would dial it directly, inside the hand's empty network namespace), while this spelling
   * goes through the sandbox's proxy, which reads it as 127.0.0.1 and checks it against the
   * allowlist entry `host` (the same socket answers both spellings on the host).
   */
  remoteUrl(capability: string, repositoryUrl: string): string {
    return `http://[::ffff:127.0.0.1]:${this.port}/${capability}${repoPath(repositoryUrl)}.git`;
  }

  /** Why the network policy refuses a repository's host (the message to show), or null when it does not. */
  async refusal(repositoryUrl: string): Promise<string | null> {
    try {
      await outboundAddress(new URL(repositoryUrl), this.#opts.outbound);
      return null;
    } catch (e) {
      // Anything else (a name that does not resolve) is git's to report, as before.
      return isOutboundRefused(e) ? e.message : null;
    }
  }

  async start(): Promise<this> {
    // No whole-request deadline (Node's default is 5 min): a large push streams its pack for longer.
    const server = http.createServer({ requestTimeout: 0 }, (req, res) => void this.#handle(req, res));
    server.on('clientError', (_e, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
    log.info('git proxy listening', { port: this.#port });
    return this;
  }

  async close(): Promise<void> {
    const s = this.#server;
    this.#server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const notFound = () => {
      req.resume();
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    };
    const parsed = parseProxyPath(req.method ?? '', req.url ?? '');
    if (!parsed) return notFound();
    let grant;
    let token: string | null;
    try {
      grant = await this.#opts.repositories.resolveCapability(parsed.capability);
      // The path must name the capability's own repository: one capability never reaches another.
      if (!grant || repoPath(`https://x${parsed.prefix}`) !== repoPath(grant.url)) return notFound();
      token = await this.#opts.repositories.token(grant.sessionId, grant.resourceId);
    } catch (e) {
      log.error('capability lookup failed', errorFields(e));
      req.resume();
      res.writeHead(503, { 'content-type': 'text/plain' }).end('git proxy unavailable\n');
      return;
    }
    const upstream = new URL(`${grant.url.replace(/\/+$/, '')}${parsed.suffix}`);
    if (upstream.protocol !== 'https:') return notFound();
    const headers: http.OutgoingHttpHeaders = {};
    for (const h of REQUEST_HEADERS) if (req.headers[h] !== undefined) headers[h] = req.headers[h];
    if (req.headers['transfer-encoding'] !== undefined && headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
    if (token !== null) headers.authorization = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
    const fields = { session: grant.sessionId, resource: grant.resourceId, hand: grant.hand, service: parsed.service, method: req.method };
    let up: http.ClientRequest;
    try {
      // Checked and pinned: a repository URL naming loopback, the metadata address or this host is never dialled.
      up = await outboundRequest(upstream, { method: req.method, headers, ...(this.#opts.upstreamCa ? { ca: this.#opts.upstreamCa } : {}) }, (ures) => this.#relay(ures, res, fields), this.#opts.outbound);
    } catch (e) {
      req.resume();
      const refused = isOutboundRefused(e);
      log.warn(refused ? 'git proxy upstream refused by the network policy' : 'git proxy upstream failed', { ...fields, host: upstream.hostname, ...(refused ? {} : errorFields(e)) });
      res.writeHead(502, { 'content-type': 'text/plain' }).end(refused ? `${e.message}\n` : 'the repository host could not be reached\n');
      return;
    }
    up.on('error', (e) => {
      log.warn('git proxy upstream failed', { ...fields, ...errorFields(e) });
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('the repository host could not be reached\n');
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    pipeline(req, up, (e) => {
      if (e) up.destroy();
    });
  }

  /** Upstream's answer back to the hand: status and the safe headers, the body streamed; a redirect never. */
  #relay(ures: http.IncomingMessage, res: http.ServerResponse, fields: Record<string, unknown>): void {
    const status = ures.statusCode ?? 502;
    log.info('git proxy request', { ...fields, status });
    if (status >= 300 && status < 400) {
      // Not followed, and not handed to the hand (it could name another host).
      ures.resume();
      res.writeHead(502, { 'content-type': 'text/plain' }).end('the repository host redirected; not followed\n');
      return;
    }
    const out: http.OutgoingHttpHeaders = {};
    for (const h of RESPONSE_HEADERS) if (ures.headers[h] !== undefined) out[h] = ures.headers[h];
    res.writeHead(status, out);
    pipeline(ures, res, (e) => {
      if (e) log.warn('git proxy response cut', { ...fields, ...errorFields(e) });
    });
  }
}
