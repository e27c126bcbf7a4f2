import 'server-only';
import { z } from 'zod';
import { SessionUpdateParams } from '~/lib/agent';
import type { SessionStatus } from '~/server/session/store';
import { archiveSession, createSession, deleteSession, updateSession } from '~/server/commands/session-commands';
import { Bool, CommonQuery, CreatedAtQuery, Limit, List, Page, createdAtRange, parseInput, queryObject } from '~/server/rest/query';
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
    ...CreatedAtQuery,
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
    createdAt: createdAtRange(q),
  });
  return { data: await Promise.all(page.data.map((s) => sessionObject(rt, s))), next_page: page.next_cursor, prev_page: page.prev_cursor ?? null };
}

async function create({ rt, body }: RestRequest) {
  return sessionObject(rt, await createSession(rt, body));
}

async function update({ rt, params, body }: RestRequest) {
  const p = parseInput(SessionUpdateParams, body, 'body');
  const current = await loadSession(rt, params.id);
  return sessionObject(rt, await updateSession(rt, current.id, p));
}

async function remove({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return { id: (await deleteSession(rt, session.id)).id, type: 'session_deleted' as const };
}

/** /v1/sessions. */
export const sessionRoutes: Route[] = [
  { method: 'POST', path: 'sessions', handler: create },
  { method: 'GET', path: 'sessions', handler: list },
  { method: 'GET', path: 'sessions/:id', callers: { workItem: 'session' }, handler: async ({ rt, params }) => sessionObject(rt, await loadSession(rt, params.id)) },
  { method: 'POST', path: 'sessions/:id', handler: update },
  { method: 'DELETE', path: 'sessions/:id', handler: remove },
  {
    method: 'POST',
    path: 'sessions/:id/archive',
    handler: async ({ rt, params }) => sessionObject(rt, await archiveSession(rt, SessionId(params.id))),
  },
];
