import 'server-only';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { isDomainError } from '~/lib/errors';
import type { Caller } from '~/server/access/access';
import { clientIp } from '~/server/access/client-ip';
import { type GuardPolicy, guardPolicyFromEnv, guardRequest } from '~/server/access/request-guard';
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

/** A JSON error answer for requests refused before they reach a procedure. */
export function refuse(status: number, message: string): Response {
  return Response.json({ error: { message, status } }, { status, headers: { 'cache-control': 'no-store' } });
}

/**
 * Reads at most `max` bytes of the body: null when it is longer. Counted as it streams, since a
 * chunked request has no Content-Length to trust.
 */
export async function readCapped(req: Request, max: number): Promise<Uint8Array | null> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > max) return null;
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
  if (refusal) return refuse(refusal.status, refusal.message);
  let request = req;
  if (req.method === 'POST') {
    const body = await readCapped(req, deps.maxBodyBytes);
    if (body === null) return refuse(413, `request body over the limit of ${deps.maxBodyBytes} bytes (PADDOCK_MAX_BODY_BYTES)`);
    request = new Request(req.url, { method: req.method, headers: req.headers, body: body as BodyInit, signal: req.signal });
  }
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: async ({ info }) => {
      try {
        const runtime = await deps.runtime();
        // A share page's subscription cannot set headers (EventSource): its token comes as a connection parameter.
        // A widget's subscription likewise carries its visitor token as a connection parameter.
        const caller: Caller = await runtime.access.identify(req.headers, info.connectionParams?.share, info.connectionParams?.visitor);
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
