import 'server-only';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { isDomainError } from '~/lib/errors';
import type { Caller } from '~/server/access/access';
import { clientIp } from '~/server/access/client-ip';
import { type GuardPolicy, guardPolicyFromEnv, guardRequest } from '~/server/access/request-guard';
import { ANONYMOUS_MAX_BODY_BYTES } from '~/lib/body-limits';
import { appRouter } from '~/server/api/root';
import { domainToTRPC } from '~/server/api/trpc';
import { logger } from '~/server/log';
import type { Runtime } from '~/server/runtime';

const log = logger('http');

export interface HttpDeps {
  runtime: () => Promise<Runtime>;
  policy?: GuardPolicy;
  /** Largest body read (PADDOCK_MAX_BODY_BYTES). */
  maxBodyBytes: number;
}

/** A 413 without reading what is left of the body. */
function tooLarge(req: Request, max: number, why: string): Response {
  void req.body?.cancel().catch(() => undefined);
  return closing(refuse(413, `request body over the limit of ${max} bytes (${why})`), req);
}

/** The answer to a request whose body was not read ends its connection: the server then reads no more of the upload (it would drain it to reuse the connection). */
export function closing(res: Response, req: Request): Response {
  if (req.body !== null) res.headers.set('connection', 'close');
  return res;
}

/** A JSON error answer for requests refused before they reach a procedure. */
export function refuse(status: number, message: string): Response {
  return Response.json({ error: { message, status } }, { status, headers: { 'cache-control': 'no-store' } });
}

/** The body's declared length: null when it has none (chunked, or no body). */
export function declaredLength(req: Request): number | null {
  const v = req.headers.get('content-length');
  if (v === null || !/^\d+$/.test(v.trim())) return null;
  return Number(v);
}

/**
 * Reads at most `max` bytes of the body: null when it is longer. A declared length over `max` is
 * refused without reading a byte; the rest is counted as it streams, since a chunked request has
 * no Content-Length to trust, and reading stops at the first byte past the cap.
 */
export async function readCapped(req: Request, max: number): Promise<Uint8Array | null> {
  const declared = declaredLength(req);
  if (declared !== null && declared > max) {
    await req.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * The web UI's tRPC endpoint: the request guard (Host, Origin, content type), the body limit,
 * then the caller is identified once and every procedure checks it (protectedProcedure).
 */
export async function handleTrpc(req: Request, deps: HttpDeps): Promise<Response> {
  const refusal = guardRequest(req, deps.policy ?? guardPolicyFromEnv());
  if (refusal) {
    // Not read to its end: the connection stops taking the upload once the answer is out.
    void req.body?.cancel().catch(() => undefined);
    return closing(refuse(refusal.status, refusal.message), req);
  }
  // The caller, found once from the headers: a stranger's body is capped small before it is read.
  let identified: Promise<{ runtime: Runtime; caller: Caller }> | undefined;
  const identify = () =>
    (identified ??= (async () => {
      const runtime = await deps.runtime();
      return { runtime, caller: await runtime.access.identify(req.headers) };
    })());
  let request = req;
  if (req.method === 'POST') {
    const declared = declaredLength(req);
    if (declared !== null && declared > deps.maxBodyBytes) return tooLarge(req, deps.maxBodyBytes, 'PADDOCK_MAX_BODY_BYTES');
    // A store that cannot answer leaves the caller unknown: createContext answers that with a 503.
    const known = await identify().then(
      (who) => who.caller.kind !== 'anonymous',
      () => false,
    );
    const max = known ? deps.maxBodyBytes : Math.min(deps.maxBodyBytes, ANONYMOUS_MAX_BODY_BYTES);
    const body = await readCapped(req, max);
    if (body === null) return known ? tooLarge(req, max, 'PADDOCK_MAX_BODY_BYTES') : tooLarge(req, max, 'for a caller not signed in');
    request = new Request(req.url, { method: req.method, headers: req.headers, body: body as BodyInit, signal: req.signal });
  }
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: async ({ info }) => {
      try {
        // A share page's subscription cannot set headers (EventSource): its token comes as a connection parameter.
        // A widget's subscription likewise carries its visitor token as a connection parameter.
        const share = info.connectionParams?.share;
        const visitor = info.connectionParams?.visitor;
        const { runtime, caller } =
          share === undefined && visitor === undefined
            ? await identify()
            : await deps.runtime().then(async (runtime) => ({ runtime, caller: await runtime.access.identify(req.headers, share, visitor) }));
        return { runtime, caller, ip: clientIp(req.headers, runtime.config.PADDOCK_TRUSTED_PROXIES) };
      } catch (e) {
        // Started while PostgreSQL was down: a 503 the client retries (getRuntime tries again on
        // the next request), not a 500.
        if (isDomainError(e)) throw domainToTRPC(e);
        throw e;
      }
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error('procedure failed', { path, error: error.message });
      else if (error.code === 'SERVICE_UNAVAILABLE') log.warn('store unavailable', { path });
    },
  });
}
