import 'server-only';
import { HeartbeatPreconditionError } from '~/server/session/work-store';
import { errorBody } from '~/server/rest/api-error';
import { queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

/** The query without the `beta` flag the SDK adds to every beta call. */
function query(q: URLSearchParams): Record<string, string | string[]> {
  const { beta: _beta, ...rest } = queryObject(q);
  return rest;
}

/** 412 in the shape the SDK maps to BetaHeartbeatPreconditionFailedError (`error.details.error_code`). */
async function heartbeat({ rt, params, query: q }: RestRequest): Promise<unknown> {
  try {
    return await rt.work.heartbeat(params.id!, params.wid!, query(q));
  } catch (e) {
    if (!(e instanceof HeartbeatPreconditionError)) throw e;
    const body = errorBody('invalid_request_error', e.message);
    return Response.json({ ...body, error: { ...body.error, details: { error_code: 'heartbeat_precondition_failed', current_state: e.current } } }, { status: 412, headers: { 'cache-control': 'no-store' } });
  }
}

/**
 * A self-hosted environment's work queue and keys (`/v1/environments/{id}/work…`, `…/keys…`).
 * Workers poll and ack with the environment key; an item's heartbeat and stop also take the token
 * in its secret; the owner's API key reads, updates, stops and makes keys.
 */
export const workRoutes: readonly Route[] = [
  { method: 'GET', path: 'environments/:id/work/poll', callers: { environmentKey: true, apiKey: false }, handler: ({ rt, params, query: q, headers, signal }) => rt.work.poll(params.id!, headers.get('anthropic-worker-id'), query(q), signal) },
  { method: 'GET', path: 'environments/:id/work/stats', callers: { environmentKey: true }, handler: ({ rt, params }) => rt.work.stats(params.id!) },
  { method: 'GET', path: 'environments/:id/work', callers: { environmentKey: true }, handler: ({ rt, params, query: q }) => rt.work.list(params.id!, query(q)) },
  { method: 'GET', path: 'environments/:id/work/:wid', handler: ({ rt, params }) => rt.work.retrieve(params.id!, params.wid!) },
  { method: 'POST', path: 'environments/:id/work/:wid', handler: ({ rt, params, body }) => rt.work.update(params.id!, params.wid!, body) },
  { method: 'POST', path: 'environments/:id/work/:wid/ack', callers: { environmentKey: true, apiKey: false }, handler: ({ rt, params }) => rt.work.ack(params.id!, params.wid!) },
  { method: 'POST', path: 'environments/:id/work/:wid/heartbeat', callers: { environmentKey: true, workItem: 'item' }, handler: heartbeat },
  { method: 'POST', path: 'environments/:id/work/:wid/stop', callers: { environmentKey: true, workItem: 'item' }, handler: ({ rt, params, body }) => rt.work.stop(params.id!, params.wid!, body) },
  { method: 'POST', path: 'environments/:id/keys', handler: ({ rt, params, body }) => rt.work.createKey(params.id!, body) },
  { method: 'GET', path: 'environments/:id/keys', handler: ({ rt, params }) => rt.work.listKeys(params.id!) },
  { method: 'DELETE', path: 'environments/:id/keys/:kid', handler: ({ rt, params }) => rt.work.revokeKey(params.id!, params.kid!) },
];
