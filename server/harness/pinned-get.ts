import 'server-only';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ToolError } from '~/lib/hand';
import { type Address, type Resolve, chooseAddress, literalAddress, pinnedLookup } from '~/server/net/address-policy';

/**
 * One HTTP GET for web_fetch, to an address checked first: the host is resolved here, a private,
 * loopback or link-local answer is refused (unless the host is listed by its exact name), and the
 * connection goes to the address that passed (a `lookup` that answers only it), so a DNS answer
 * that changes between check and connect (rebinding) changes nothing. No redirect is followed
 * here (the caller checks each hop), no cookie or credential is sent, and at most `maxBytes` of
 * the body are read.
 */

export type { Address, Resolve } from '~/server/net/address-policy';
export { systemResolve } from '~/server/net/address-policy';

export const USER_AGENT = 'Paddock-web_fetch/1';

/**
 * Where to connect for `host`: an IP literal itself, else a resolved address. Unless `explicit`
 * (the host is listed by its exact name or address), an address outside public space (this
 * machine's own interface addresses included) is refused.
 */
export async function checkedAddress(host: string, explicit: boolean, resolve: Resolve): Promise<Address> {
  const literal = literalAddress(host);
  let candidates: Address[];
  if (literal) candidates = [literal];
  else {
    try {
      candidates = await resolve(host);
    } catch (e) {
      throw new ToolError(`web_fetch: could not resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (candidates.length === 0) throw new ToolError(`web_fetch: ${host} has no address`);
  }
  const choice = chooseAddress(host, candidates, () => explicit);
  if (choice.ok) return choice.to;
  const what = literal ? `${host} is ${choice.refused[0]}` : `${host} resolves to ${choice.refused.join(' and ')}`;
  throw new ToolError(
    `web_fetch: refused: ${what}. Private, loopback and link-local addresses are fetched only from a host listed by its exact name or address in the environment's allowed_hosts`,
  );
}

export interface PinnedResponse {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** The (decoded) body, at most `maxBytes`; empty for a redirect or a body not worth reading. */
  body: Buffer;
  /** The body was longer than `maxBytes`: reading stopped there. */
  capped: boolean;
}

export interface PinnedGetOptions {
  signal: AbortSignal;
  maxBytes: number;
  /** Whether a body with these headers is read at all (binary content is only described). */
  wantsBody: (headers: http.IncomingHttpHeaders) => boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
export const isRedirect = (status: number) => REDIRECTS.has(status);

function decoder(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/** GET `url`, connecting only to `to`. Rejects with the socket's error, or the signal's reason. */
export function pinnedGet(url: URL, to: Address, o: PinnedGetOptions): Promise<PinnedResponse> {
  const lookup = pinnedLookup(to);
  const request = url.protocol === 'https:' ? https.request : http.request;
  const aborted = () => (o.signal.reason instanceof Error ? o.signal.reason : new Error('the fetch was aborted'));
  return new Promise<PinnedResponse>((resolve, reject) => {
    if (o.signal.aborted) {
      reject(aborted());
      return;
    }
    let stream: Readable | null = null;
    const onAbort = () => {
      stream?.destroy();
      req.destroy();
      reject(aborted());
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => o.signal.removeEventListener('abort', onAbort);
    const req = request(
      url,
      {
        method: 'GET',
        // A fresh connection every time (no pooled socket to another address), no cookies, no auth.
        agent: false,
        lookup,
        headers: {
          'user-agent': USER_AGENT,
          accept: 'text/html, text/markdown;q=0.9, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5',
          'accept-encoding': 'identity',
        },
      },
      (res) => {
        const base = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers };
        if (isRedirect(base.status) || !o.wantsBody(res.headers)) {
          res.destroy();
          done();
          resolve({ ...base, body: Buffer.alloc(0), capped: false });
          return;
        }
        const decode = decoder(res.headers['content-encoding']);
        const body: Readable = decode ? res.pipe(decode) : res;
        stream = body;
        const chunks: Buffer[] = [];
        let size = 0;
        let capped = false;
        const finish = () => {
          done();
          resolve({ ...base, body: Buffer.concat(chunks).subarray(0, o.maxBytes), capped });
        };
        body.on('data', (chunk: Buffer) => {
          if (capped) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size > o.maxBytes) {
            capped = true;
            res.destroy();
            body.destroy();
            finish();
          }
        });
        body.once('end', finish);
        body.once('error', (e) => {
          done();
          reject(e);
        });
      },
    );
    req.once('error', (e) => {
      done();
      reject(e);
    });
    req.end();
  });
}
