import 'server-only';
import { z } from 'zod';
import { SessionUpdateParams, patchMetadata } from '~/lib/agent';
import type { SessionStatus } from '~/server/session/store';
import { createSessionFor } from '~/server/agents/new-session';
import { ApiError } from '~/server/rest/api-error';
import { Bool, CommonQuery, Limit, List, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';
import { sessionObject } from '~/server/rest/session-object';
import { SessionId, loadSession } from '~/server/rest/session-id';

const STATUSES = ['rescheduling', 'running', 'idle', 'terminated'] as const satisfies readonly SessionStatus[];
const ListQuery = z
  .object({
    limit: Limit(100, 20),
    page: Page,
    order: z.enum(['asc', 'desc']).default('desc'),
    agent_id: z.string().min(1).max(64).optional(),
    agent_version: z.coerce.number().int().positive().optional(),
    include_archived: Bool.optional(),
    statuses: List(z.enum(STATUSES)),
    ...CommonQuery,
  })
  .strict();

async function list({ rt, query }: RestRequest) {
  const q = parseInput(ListQuery, queryObject(query), 'query');
  const page = await rt.store.listSessions({
    limit: q.limit,
    cursor: q.page ?? null,
    by: 'created_at',
    order: q.order,
    ...(q.agent_id ? { agentId: q.agent_id } : {}),
    ...(q.agent_version ? { agentVersion: q.agent_version } : {}),
    ...(q.statuses && q.statuses.length > 0 ? { statuses: q.statuses } : {}),
    includeArchived: q.include_archived ?? false,
  });
  return { data: await Promise.all(page.data.map((s) => sessionObject(rt, s))), next_page: page.next_cursor, prev_page: page.prev_cursor ?? null };
}

async function create({ rt, body }: RestRequest) {
  const { session, hasWork } = await createSessionFor(rt, body);
  if (hasWork) void rt.harness.wake(session.id);
  return sessionObject(rt, session);
}

async function update({ rt, params, body }: RestRequest) {
  const p = parseInput(SessionUpdateParams, body, 'body');
  const current = await loadSession(rt, params.id);
  const updated = await rt.store.updateSession(current.id, {
    ...(p.title ? { title: p.title } : {}),
    ...(p.metadata !== undefined ? { metadata: patchMetadata(current.metadata, p.metadata) } : {}),
  });
  return sessionObject(rt, updated);
}

async function remove({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  if (session.status === 'running') throw new ApiError('invalid_request_error', `session ${session.id} is running: interrupt it (user.interrupt) before deleting it`);
  // Its hands end and their workspaces go first, then its log and rows.
  await rt.hands.deleteSession(session.id);
  // Its resources, sealed tokens and git capabilities (dead from here on).
  await rt.repositories.removeSession(session.id);
  await rt.store.deleteSession(session.id);
  return { id: session.id, type: 'session_deleted' as const };
}

/** /v1/sessions. */
export const sessionRoutes: Route[] = [
  { method: 'POST', path: 'sessions', handler: create },
  { method: 'GET', path: 'sessions', handler: list },
  { method: 'GET', path: 'sessions/:id', handler: async ({ rt, params }) => sessionObject(rt, await loadSession(rt, params.id)) },
  { method: 'POST', path: 'sessions/:id', handler: update },
  { method: 'DELETE', path: 'sessions/:id', handler: remove },
  {
    method: 'POST',
    path: 'sessions/:id/archive',
    handler: async ({ rt, params }) => sessionObject(rt, await rt.store.updateSession(SessionId(params.id), { archived: true })),
  },
];
