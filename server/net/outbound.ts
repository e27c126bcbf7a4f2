import 'server-only';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { isIpLiteral, sameAddress } from '~/lib/ip-address';
import { hostEntryMatch, isHostEntry, splitPort } from '~/lib/network-policy';
import { type Address, type Resolve, chooseAddress, literalAddress, pinnedLookup, systemResolve } from '~/server/net/address-policy';

/**
 * Connections the server makes on a user's behalf to a URL the user gave (an agent's MCP server,
 * an OAuth token endpoint, a repository's host; webhooks later), under web_fetch's address policy
 * (`address-policy.ts`): public addresses only, pinned at connect. The one exception is the
 * operator's: hosts or addresses listed in `PADDOCK_OUTBOUND_ALLOW` (an MCP server on this
 * machine, a git host on the LAN) are reached whatever they resolve to.
 */

export const OUTBOUND_ALLOW_ENV = 'PADDOCK_OUTBOUND_ALLOW';

export interface OutboundPolicy {
  /** Allowlist entries (network-policy.ts's syntax) the operator trusts despite a private address. */
  allow: readonly string[];
  resolve?: Resolve;
}

/** `PADDOCK_OUTBOUND_ALLOW` as entries; malformed ones dropped (config.ts refuses them at start). */
export function parseOutboundAllow(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && isHostEntry(e));
}

/** The server's policy: read from the environment each time (config.ts validated it at start). */
export function defaultOutboundPolicy(): OutboundPolicy {
  return { allow: parseOutboundAllow(process.env[OUTBOUND_ALLOW_ENV]) };
}

/** A connection the policy refused. The message names the host only: nothing about what answers there. */
export class OutboundRefusedError extends Error {
  constructor(readonly host: string) {
    super(`${host} was refused by the network policy: the server connects only to public addresses, unless its operator trusts the host`);
    this.name = 'OutboundRefusedError';
  }
}

export function isOutboundRefused(e: unknown): e is OutboundRefusedError {
  return e instanceof Error && e.name === 'OutboundRefusedError';
}

const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/** Whether an operator entry names this host, or the address it resolved to (an IP entry). */
function trusted(allow: readonly string[], host: string, port: number, a: Address): boolean {
  return allow.some((entry) => {
    if (hostEntryMatch(host, port, entry) !== null) return true;
    const e = splitPort(entry.trim());
    return isIpLiteral(e.host) && (e.port === undefined || e.port === port) && sameAddress(e.host, a.address);
  });
}

/**
 * The address to connect to for `url`, checked; throws OutboundRefusedError when the policy
 * refuses it, or the resolver's error (a `code` such as ENOTFOUND) when the host has no address.
 */
export async function outboundAddress(url: URL, policy: OutboundPolicy = defaultOutboundPolicy()): Promise<Address> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(url.protocol);
  const host = hostOf(url);
  const port = portOf(url);
  const literal = literalAddress(host);
  const candidates = literal ? [literal] : await (policy.resolve ?? systemResolve)(host);
  if (candidates.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  const choice = chooseAddress(host, candidates, (a) => trusted(policy.allow, host, port, a));
  if (!choice.ok) throw new OutboundRefusedError(host);
  return choice.to;
}

export type OutboundFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

function bodyOf(body: RequestInit['body']): { data: Buffer | null; type?: string } {
  if (body === undefined || body === null) return { data: null };
  if (typeof body === 'string') return { data: Buffer.from(body), type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams) return { data: Buffer.from(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (body instanceof ArrayBuffer) return { data: Buffer.from(body) };
  if (ArrayBuffer.isView(body)) return { data: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  throw new TypeError('outbound fetch: only string, URLSearchParams and byte bodies are sent');
}

const NO_BODY = new Set([101, 204, 205, 304]);

/** `p`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A `fetch` for user-given URLs (the MCP SDK's transport takes one): each request is checked
 * by `outboundAddress` and sent on a fresh connection to that address only. Redirects are never
 * followed here: `redirect: 'error'` makes one a failure, otherwise the 3xx is returned as it is
 * (the MCP SDK follows one within its origin, through this fetch again). Failures reject as
 * fetch's do (`TypeError('fetch failed')` with the cause), a refusal with OutboundRefusedError.
 */
export function outboundFetch(policy?: OutboundPolicy): OutboundFetch {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    let to: Address;
    try {
      // A slow resolver must not outlast the caller's signal (a timeout, an interrupt).
      to = await untilAborted(outboundAddress(url, policy ?? defaultOutboundPolicy()), signal);
    } catch (e) {
      if (isOutboundRefused(e) || signal?.aborted) throw e;
      throw new TypeError('fetch failed', { cause: e });
    }
    const { data, type } = bodyOf(init.body);
    const headers = new Headers(init.headers);
    if (type && !headers.has('content-type')) headers.set('content-type', type);
    // No decoding here: ask for none.
    headers.set('accept-encoding', 'identity');
    if (data) headers.set('content-length', String(data.length));
    const method = (init.method ?? 'GET').toUpperCase();
    const request = url.protocol === 'https:' ? https.request : http.request;
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method, headers: Object.fromEntries(headers), agent: false, lookup: pinnedLookup(to) }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && init.redirect === 'error') {
          res.destroy();
          reject(new TypeError('fetch failed', { cause: new Error(`${hostOf(url)} redirected; redirects are not followed`) }));
          return;
        }
        const h = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const body = method === 'HEAD' || NO_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        if (!body) res.resume();
        try {
          resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: h }));
        } catch (e) {
          res.destroy();
          reject(new TypeError('fetch failed', { cause: e }));
        }
      });
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => signal?.removeEventListener('abort', onAbort));
      req.once('error', (e) => reject(signal?.aborted && signal.reason instanceof Error ? signal.reason : new TypeError('fetch failed', { cause: e })));
      req.end(data ?? undefined);
    });
  };
}

/**
 * An http(s) request to a checked, pinned address (the git proxy's upstream): as `https.request`,
 * after `outboundAddress` said yes. Rejects with OutboundRefusedError or the resolver's error.
 */
export async function outboundRequest(
  url: URL,
  options: https.RequestOptions,
  onResponse: (res: http.IncomingMessage) => void,
  policy?: OutboundPolicy,
): Promise<http.ClientRequest> {
  const to = await outboundAddress(url, policy ?? defaultOutboundPolicy());
  const request = url.protocol === 'https:' ? https.request : http.request;
  return request(url, { ...options, agent: false, lookup: pinnedLookup(to) }, onResponse);
}
