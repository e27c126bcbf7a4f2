import 'server-only';
import { monotonicFactory } from 'ulid';
import { isStoreUnavailable } from '~/lib/errors';
import { type GuardPolicy, type Refusal, guardPolicyFromEnv, guardRequest, hasApiKeyHeader } from '~/server/access/request-guard';
import { closing, declaredLength, readCapped } from '~/server/api/http-handler';
import { logger } from '~/server/log';
import { agentRoutes, environmentRoutes } from '~/server/rest/agents';
import { type ApiErrorType, ApiError, errorBody, toApiError } from '~/server/rest/api-error';
import { eventRoutes } from '~/server/rest/events';
import { threadRoutes } from '~/server/rest/threads';
import { metricsRoutes } from '~/server/rest/metrics';
import { fileRoutes } from '~/server/rest/files';
import { memoryStoreRoutes } from '~/server/rest/memory-stores';
import { skillRoutes } from '~/server/rest/skills';
import { deploymentRoutes } from '~/server/rest/deployments';
import { webhookRoutes } from '~/server/rest/webhooks';
import { resourceRoutes } from '~/server/rest/resources';
import { type Route, matchRoute } from '~/server/rest/route-table';
import { refusedRouteCaller } from '~/server/access/route-callers';
import { workRoutes } from '~/server/rest/work';
import { sessionRoutes } from '~/server/rest/sessions';
import { vaultRoutes } from '~/server/rest/vaults';
import type { Runtime } from '~/server/runtime';

const log = logger('rest');
const ulid = monotonicFactory();

/** Every /v1 route: one table, so the access check and the fuzz suite see them all. */
export const REST_ROUTES: readonly Route[] = [...agentRoutes, ...workRoutes, ...environmentRoutes, ...sessionRoutes, ...eventRoutes, ...threadRoutes, ...vaultRoutes, ...resourceRoutes, ...fileRoutes, ...memoryStoreRoutes, ...skillRoutes, ...deploymentRoutes, ...webhookRoutes, ...metricsRoutes];

export interface RestDeps {
  runtime: () => Promise<Runtime>;
  policy?: GuardPolicy;
  /** Largest body read (PADDOCK_MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /** Largest upload an upload route streams (PADDOCK_MAX_UPLOAD_BYTES). */
  maxUploadBytes?: number;
}

/** The upload cap when none is configured: the Files API's own limit. */
export const DEFAULT_MAX_UPLOAD_BYTES = 500 * 1024 * 1024;

function errorResponse(type: ApiErrorType, message: string, requestId: string, status = new ApiError(type, '').status, fields: Readonly<Record<string, string>> = {}): Response {
  return Response.json(errorBody(type, message, fields), { status, headers: { 'request-id': requestId, 'cache-control': 'no-store' } });
}

/**
 * A body refused before it is read is cancelled, not left for the server to read to its end: the
 * connection stops taking a stranger's upload as soon as the answer is out.
 */
function discardBody(req: Request): void {
  void req.body?.cancel().catch(() => undefined);
}

function tooLarge(max: number, requestId: string, setting = 'PADDOCK_MAX_BODY_BYTES'): Response {
  return errorResponse('request_too_large', `request body over the limit of ${max} bytes (${setting})`, requestId);
}

/** The request guard's refusals in the API's error shape; a program without a key is told to send one. */
function refusalResponse(r: Refusal, headers: Headers, requestId: string): Response {
  if (r.status === 403 && headers.get('origin') === null && !hasApiKeyHeader(headers)) {
    return errorResponse('authentication_error', 'send an API key: x-api-key or Authorization: Bearer (make one on the settings page)', requestId);
  }
  const type: ApiErrorType = r.status === 403 || r.status === 421 ? 'permission_error' : 'invalid_request_error';
  return errorResponse(type, r.message, requestId, r.status);
}

/**
 * The Managed Agents REST API: the request guard, the caller (an API key: programs only), the
 * body cap, then the route. Every answer carries a `request-id`; every error is
 * `{type: 'error', error: {type, message}}` with the status of its type, and nothing is a bare 500.
 */
export async function handleRest(req: Request, deps: RestDeps): Promise<Response> {
  const requestId = `req_${ulid()}`;
  const url = new URL(req.url);
  const segments = url.pathname.replace(/^\/v1\/?/, '').split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  // The route decides the cap (an upload's is larger); the match needs nothing but the path.
  const match = matchRoute(REST_ROUTES, req.method, segments);
  const upload = match.route?.upload === true;
  const refusal = guardRequest({ method: req.method, headers: req.headers, url: req.url, upload }, deps.policy ?? guardPolicyFromEnv());
  if (refusal) {
    discardBody(req);
    return closing(refusalResponse(refusal, req.headers, requestId), req);
  }
  const maxUploadBytes = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const cap = upload ? maxUploadBytes : deps.maxBodyBytes;
  // Refused from its declared length alone, before the caller is looked up or a byte is read.
  const declared = declaredLength(req);
  if (req.method === 'POST' && declared !== null && declared > cap) {
    discardBody(req);
    return closing(tooLarge(cap, requestId, upload ? 'PADDOCK_MAX_UPLOAD_BYTES' : 'PADDOCK_MAX_BODY_BYTES'), req);
  }
  try {
    const rt = await deps.runtime();
    const caller = await rt.access.identify(req.headers);
    // Programs only: a browser's sign-in cookie opens the UI, never this API (no cross-site reads).
    if (caller.kind !== 'api_key' && caller.kind !== 'environment_key' && caller.kind !== 'work_item') {
      discardBody(req);
      return closing(errorResponse('authentication_error', 'invalid or missing API key: send x-api-key or Authorization: Bearer with a key from the settings page', requestId), req);
    }
    if (!match.route) {
      const where = `${req.method} ${url.pathname.slice(0, 200)}`;
      return match.allowed.length > 0
        ? errorResponse('not_found_error', `${where}: this path takes ${match.allowed.join(', ')}`, requestId, 405)
        : errorResponse('not_found_error', `${where}: no such endpoint`, requestId);
    }
    // A worker's credential opens only its own routes (server/access/route-callers.ts).
    const refused = await refusedRouteCaller(match.route.callers, caller, match.params, rt.store);
    if (refused !== null) {
      // Its body unread: the connection ends with this answer (as the sign-in refusal's does), so
      // no byte of it can be read as the client's next request on a kept-alive connection.
      discardBody(req);
      return closing(errorResponse('permission_error', refused, requestId), req);
    }
    let body: unknown;
    if (req.method === 'POST' && !upload) {
      const bytes = await readCapped(req, deps.maxBodyBytes);
      if (bytes === null) return closing(tooLarge(deps.maxBodyBytes, requestId), req);
      const text = Buffer.from(bytes).toString('utf8');
      if (text.trim().length > 0) {
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          return errorResponse('invalid_request_error', 'body: not valid JSON', requestId);
        }
      }
    }
    const stream = upload ? req.body : null;
    const result = await match.route.handler({ rt, caller, params: match.params, query: url.searchParams, body, stream, maxUploadBytes, headers: req.headers, signal: req.signal, requestId });
    if (result instanceof Response) {
      result.headers.set('request-id', requestId);
      return result;
    }
    return Response.json(result, { headers: { 'request-id': requestId, 'cache-control': 'no-store' } });
  } catch (e) {
    const api = toApiError(e);
    if (api) {
      if (isStoreUnavailable(e)) log.warn('store unavailable', { path: url.pathname });
      return errorResponse(api.type, api.message, requestId, api.status, api.fields);
    }
    log.error('request failed', { method: req.method, path: url.pathname, requestId, error: e instanceof Error ? e.message : String(e) });
    return errorResponse('api_error', `internal error; request-id ${requestId}`, requestId);
  }
}
