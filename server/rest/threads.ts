import 'server-only';
import { z } from 'zod';
import { NotFoundError } from '~/lib/errors';
import { ThreadId } from '~/lib/events';
import { onThreadStream, primaryThreadId } from '~/lib/threads';
import { archiveThread, getThread, listThreads, threadEvents } from '~/server/commands/thread-commands';
import { streamEvents } from '~/server/rest/event-stream';
import { CommonQuery, Limit, List, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';
import { loadSession } from '~/server/rest/session-id';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { pageOf } from '~/server/session/keyset-page';

const STATUSES = ['running', 'idle', 'rescheduling', 'terminated'] as const;
const ListQuery = z.object({ limit: Limit(100, 20), page: Page, statuses: List(z.enum(STATUSES)), ...CommonQuery }).strict();
const EventsQuery = z.object({ limit: Limit(1000, 100), page: Page, order: z.enum(['asc', 'desc']).default('asc'), ...CommonQuery }).strict();

/** A thread id that is not one names no thread: 404, as an unknown one. */
function threadId(v: string | undefined): string {
  if (v === undefined || !ThreadId.safeParse(v).success) throw new NotFoundError('session thread', String(v).slice(0, 80));
  return v;
}

/** GET /v1/sessions/{id}/threads: the primary thread, then each child (`statuses` filters). */
async function list({ rt, params, query }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const q = parseInput(ListQuery, queryObject(query), 'query');
  const all = await listThreads(rt.store, session, q.statuses ?? []);
  const scope = `threads:${session.id}`;
  const after = q.page ? decodeCursor(q.page, scope, [z.number().int().nonnegative()])[0] : 0;
  const rows = all.map((t, i) => ({ t, i: i + 1 })).filter((r) => r.i > after).slice(0, q.limit + 1);
  const page = pageOf(rows, q.limit, (last) => encodeCursor(scope, [last.i]));
  return { data: page.data.map((r) => r.t), next_page: page.next_page };
}

async function retrieve({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return getThread(rt.store, session, threadId(params.tid));
}

async function archive({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return archiveThread(rt.store, session, threadId(params.tid));
}

/** GET /v1/sessions/{id}/threads/{tid}/events: that thread's own events (the primary's: the session's stream). */
async function events({ rt, params, query }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const tid = threadId(params.tid);
  const q = parseInput(EventsQuery, queryObject(query), 'query');
  const scope = `thread_events:${session.id}:${tid}:${q.order}`;
  const after = q.page ? decodeCursor(q.page, scope, [z.number().int().nonnegative()])[0] : null;
  const mine = (await threadEvents(rt.store, session, tid, { order: q.order })).filter((e) => after === null || (q.order === 'asc' ? e.seq > after : e.seq < after));
  return pageOf(mine.slice(0, q.limit + 1), q.limit, (last) => encodeCursor(scope, [last.seq]));
}

/** GET /v1/sessions/{id}/threads/{tid}/stream: that thread's events from now on, with `event_deltas` of its own requests. */
async function stream(req: RestRequest) {
  const session = await loadSession(req.rt, req.params.id);
  const tid = threadId(req.params.tid);
  const primaryId = primaryThreadId(session.id);
  if (tid !== primaryId) await getThread(req.rt.store, session, tid);
  return streamEvents(req, (e) => onThreadStream(e, tid, primaryId));
}

/** /v1/sessions/{id}/threads (multiagent). */
export const threadRoutes: Route[] = [
  { method: 'GET', path: 'sessions/:id/threads', handler: list },
  { method: 'GET', path: 'sessions/:id/threads/:tid', handler: retrieve },
  { method: 'POST', path: 'sessions/:id/threads/:tid/archive', handler: archive },
  { method: 'GET', path: 'sessions/:id/threads/:tid/events', handler: events },
  { method: 'GET', path: 'sessions/:id/threads/:tid/stream', handler: stream },
];
