import 'server-only';
import { type InlineThreadAgent, type SessionAgent, type ThreadAgent, inlineThreadAgent } from '~/lib/agent';
import { ConflictError, NotFoundError } from '~/lib/errors';
import type { EventType, NewEvent, StoredEvent } from '~/lib/events';
import { onThreadStream, primaryThreadId } from '~/lib/threads';
import { THREAD_ACCOUNTED, type ThreadStats, type ThreadUsage, accountThread } from '~/lib/thread-accounting';
import { delegationOf, runsThreads } from '~/server/harness/core/delegation';
import { KyselySessionStore } from '~/server/session/kysely-queries';
import type { Session, SessionStatus, SessionStore } from '~/server/session/store';

/**
 * A session's threads (multiagent) as the API shows them (SDK `BetaManagedAgentsSessionThread`):
 * the primary thread (the session's own stream) and each child the log made, with the status its
 * latest status event gives. Threads live in the log; only an archive is a row of its own.
 */
export interface SessionThread {
  id: string;
  type: 'session_thread';
  session_id: string;
  /** A rostered agent's snapshot, or an inline agent's (the coordinator's, with its definition). */
  agent: ThreadAgent | InlineThreadAgent | null;
  parent_thread_id: string | null;
  status: SessionStatus;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** Its time running (null until its first status), from its status events in the log. */
  stats: ThreadStats | null;
  /** Its own model requests' tokens (null until it first idles). */
  usage: ThreadUsage | null;
  workflow_run_id: null;
}

const THREAD_EVENTS: EventType[] = ['session.thread_created', 'session.thread_status_running', 'session.thread_status_idle', 'session.thread_status_rescheduled', 'session.thread_status_terminated'];

const STATUS_OF: Partial<Record<EventType, SessionStatus>> = {
  'session.thread_status_running': 'running',
  'session.thread_status_idle': 'idle',
  'session.thread_status_rescheduled': 'rescheduling',
  'session.thread_status_terminated': 'terminated',
};

function threadAgentOfSession(agent: SessionAgent | null): ThreadAgent | null {
  if (!agent) return null;
  const { multiagent: _m, ...rest } = agent;
  return rest;
}

async function archives(store: SessionStore, sessionId: string): Promise<Map<string, string>> {
  if (!(store instanceof KyselySessionStore)) return new Map();
  const rows = await store.db.selectFrom('session_thread_archives').select(['thread_id', 'archived_at']).where('session_id', '=', sessionId).execute();
  return new Map(rows.map((r) => [r.thread_id, r.archived_at]));
}

/** Every thread of a session, the primary first, then children in the order they were made. */
export async function listThreads(store: SessionStore, session: Session, statuses?: readonly SessionStatus[]): Promise<SessionThread[]> {
  // One read of the log gives every thread its status, its usage and its time running.
  const [events, archived] = await Promise.all([store.getEvents(session.id, { types: THREAD_ACCOUNTED }), archives(store, session.id)]);
  const primaryId = primaryThreadId(session.id);
  const threads: SessionThread[] = [
    {
      id: primaryId,
      type: 'session_thread',
      session_id: session.id,
      agent: threadAgentOfSession(session.agent ?? null),
      parent_thread_id: null,
      status: await aggregateStatus(store, session, events),
      created_at: session.created_at,
      updated_at: session.updated_at,
      archived_at: null,
      stats: null,
      usage: null,
      workflow_run_id: null,
    },
  ];
  const coordinator = session.agent ?? null;
  const { roster } = delegationOf(coordinator);
  for (const e of events) {
    if (e.type === 'session.thread_created') {
      const def = e.inline_agent
        ? coordinator && inlineThreadAgent(coordinator, e.agent_name, e.inline_agent)
        : (roster.find((a) => a.id === e.agent_id) ?? roster.find((a) => a.name === e.agent_name) ?? null);
      // Made with a message to work on: running until its first status says otherwise.
      threads.push({ id: e.session_thread_id, type: 'session_thread', session_id: session.id, agent: def, parent_thread_id: e.parent_thread_id ?? primaryId, status: 'running', created_at: e.processed_at, updated_at: e.processed_at, archived_at: archived.get(e.session_thread_id) ?? null, stats: null, usage: null, workflow_run_id: null });
      continue;
    }
    const t = threads.find((x) => x.id === e.session_thread_id);
    const status = STATUS_OF[e.type];
    if (t && status) {
      t.status = status;
      t.updated_at = e.processed_at;
    }
  }
  const now = Date.now();
  for (const t of threads) Object.assign(t, accountThread(events, { id: t.parent_thread_id === null ? null : t.id, created_at: t.created_at, archived_at: t.archived_at }, now));
  return statuses && statuses.length > 0 ? threads.filter((t) => statuses.includes(t.status)) : threads;
}

/** The session's status with its threads: any thread running makes it running. */
export async function aggregateStatus(store: SessionStore, session: Session, threadEvents?: readonly StoredEvent[]): Promise<SessionStatus> {
  if (session.status !== 'idle' || !runsThreads(session.agent)) return session.status;
  const events = threadEvents ?? (await store.getEvents(session.id, { types: THREAD_EVENTS }));
  const last = new Map<string, SessionStatus>();
  for (const e of events) {
    if (e.type === 'session.thread_created') last.set(e.session_thread_id, 'running');
    const s = STATUS_OF[e.type];
    if (s && e.session_thread_id) last.set(e.session_thread_id, s);
  }
  return [...last.values()].some((s) => s === 'running' || s === 'rescheduling') ? 'running' : 'idle';
}

export async function getThread(store: SessionStore, session: Session, threadId: string): Promise<SessionThread> {
  const t = (await listThreads(store, session)).find((x) => x.id === threadId);
  if (!t) throw new NotFoundError('session thread', threadId);
  return t;
}

/** Archives a child thread that is idle (a running one, or the primary: 409). */
export async function archiveThread(store: SessionStore, session: Session, threadId: string): Promise<SessionThread> {
  const t = await getThread(store, session, threadId);
  if (t.parent_thread_id === null) throw new ConflictError(`thread ${threadId} is the session's primary thread: archive the session instead`);
  if (t.archived_at !== null) return t;
  if (t.status !== 'idle') throw new ConflictError(`thread ${threadId} is ${t.status}: only an idle thread can be archived`);
  if (!(store instanceof KyselySessionStore)) throw new ConflictError('threads cannot be archived on this store');
  const now = new Date().toISOString();
  await store.db.insertInto('session_thread_archives').values({ session_id: session.id, thread_id: threadId, archived_at: now }).onConflict((oc) => oc.columns(['session_id', 'thread_id']).doNothing()).execute();
  return getThread(store, session, threadId);
}

/** A thread's own events (the primary's: the session's stream, children's cross-posted events included). */
export async function threadEvents(store: SessionStore, session: Session, threadId: string, slice: { order: 'asc' | 'desc' }): Promise<StoredEvent[]> {
  const primaryId = primaryThreadId(session.id);
  if (threadId !== primaryId) await getThread(store, session, threadId);
  const events = await store.getEvents(session.id, { order: slice.order });
  return events.filter((e) => onThreadStream(e, threadId, primaryId));
}

/**
 * Sends addressed to threads: an interrupt naming a thread stops that thread only (the primary's
 * id: the primary); one naming none stops every thread (one interrupt per thread, in one append).
 * A confirmation or a custom tool's result goes to the thread whose call asked.
 */
export async function routeToThreads(store: SessionStore, session: Session, events: readonly (NewEvent & { session_thread_id?: string | null })[]): Promise<NewEvent[]> {
  if (!runsThreads(session.agent)) return events.map(({ session_thread_id: _t, ...e }) => e as NewEvent);
  const primaryId = primaryThreadId(session.id);
  const threads = (await listThreads(store, session)).filter((t) => t.parent_thread_id !== null);
  const calls = events.some((e) => e.type === 'user.tool_confirmation' || e.type === 'user.custom_tool_result')
    ? new Map((await store.getEvents(session.id, { types: ['agent.tool_use', 'agent.mcp_tool_use', 'agent.custom_tool_use'] })).map((c) => [c.id, c.session_thread_id]))
    : new Map<string, string | undefined>();
  const out: NewEvent[] = [];
  for (const e of events) {
    const { session_thread_id: named, ...rest } = e;
    const event = rest as NewEvent;
    switch (event.type) {
      case 'user.interrupt':
        if (named === undefined || named === null) {
          out.push({ type: 'user.interrupt' });
          for (const t of threads) if (t.status !== 'idle' && t.archived_at === null) out.push({ type: 'user.interrupt', session_thread_id: t.id });
        } else if (named === primaryId) out.push({ type: 'user.interrupt' });
        else {
          if (!threads.some((t) => t.id === named)) throw new NotFoundError('session thread', named);
          out.push({ type: 'user.interrupt', session_thread_id: named });
        }
        break;
      case 'user.tool_confirmation': {
        const thread = calls.get(event.tool_use_id);
        out.push(thread ? { ...event, session_thread_id: thread } : event);
        break;
      }
      case 'user.custom_tool_result': {
        const thread = calls.get(event.custom_tool_use_id);
        out.push(thread ? { ...event, session_thread_id: thread } : event);
        break;
      }
      default:
        out.push(event);
    }
  }
  return out;
}
