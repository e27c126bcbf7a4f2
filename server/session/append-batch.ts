import 'server-only';
import { type Insertable, sql } from 'kysely';
import { ConflictError, InvalidInputError, NotFoundError, SeqConflictError, StaleFenceError } from '~/lib/errors';
import { type NewEvent, SIDE_EVENT_TYPES, type StoredEvent, describeZodError, NewEvent as NewEventSchema } from '~/lib/events';
import { newId } from '~/lib/ids';
import { logWebhooks } from '~/lib/log-webhooks';
import type { Settled } from '~/server/session/group-commit';
import { type PayloadCache, readEvents } from '~/server/session/payload-cache';
import type { NewEventRow, SessionRow, Tx, WebhookOutboxTable } from '~/server/session/schema';
import { type Fence, type SessionPatch, type SessionStatus, type SessionWaitingOn, terminatedMessage } from '~/server/session/store';
import { writePatch } from '~/server/session/session-patch';
import { listedMessage, waitingOnFrom } from '~/server/session/list-columns';
import { insertOutbox } from '~/server/session/webhook-outbox';

/** Rows per INSERT: keeps big batches far below SQLite's bound-parameter limit (and PostgreSQL's). */
const INSERT_CHUNK = 500;

/** The log's status events, and the session status each one leaves behind. */
const STATUS_OF: Partial<Record<NewEvent['type'], SessionStatus>> = {
  'session.status_running': 'running',
  'session.status_idle': 'idle',
  'session.status_rescheduled': 'rescheduling',
  'session.status_terminated': 'terminated',
};

export interface AppendRequest {
  sessionId: string;
  /** Validated. */
  events: readonly NewEvent[];
  key: string | undefined;
  expectLastSeq: number | undefined;
  fence: Fence | undefined;
  ids: readonly (string | undefined)[] | undefined;
  /** A change to the session's row that commits with these events (an update and its `session.updated`). */
  patch?: SessionPatch | undefined;
}

export interface AppendOutcome {
  /** False for a repeated idempotency key: `events` is what the first request stored. */
  appended: boolean;
  events: StoredEvent[];
}

type SessionState = Pick<SessionRow, 'id' | 'last_seq' | 'status' | 'last_event_type' | 'lease_owner' | 'lease_epoch'> & {
  touched: boolean;
  /** Set by a status event in this batch (the calls a requires_action idle names, resolved after the loop). */
  waiting?: { on: SessionWaitingOn | null; calls: readonly string[] };
  /** Set by a message in this batch. */
  lastMessage?: string;
};

/** Sessions per UPDATE: four parameters each stay far below the parameter limits. */
const UPDATE_CHUNK = 100;

const keyOf = (sessionId: string, key: string) => `${sessionId}\n${key}`;

/**
 * The appends of one batch, in order, as set operations: one read of every session row involved
 * (locked, in id order, where the database needs it: batches of several instances then never
 * deadlock), one lookup of their idempotency keys, the checks and seqs in memory, then one insert
 * of all events, one of the keys and one update of the session rows. A request refused by the
 * checks fails alone, leaving the state the next request of its session sees untouched.
 */
export async function appendAll(trx: Tx, cache: PayloadCache, batch: readonly AppendRequest[], lockRows: boolean, onSharedWriteFailure: () => void): Promise<Settled<AppendOutcome>[]> {
  const ids = [...new Set(batch.map((r) => r.sessionId))].sort();
  let read = trx.selectFrom('sessions').select(['id', 'last_seq', 'status', 'last_event_type', 'lease_owner', 'lease_epoch']).where('id', 'in', ids).orderBy('id');
  if (lockRows) read = read.forUpdate();
  const sessions = new Map<string, SessionState>();
  for (const row of await read.execute()) sessions.set(row.id, { ...row, touched: false });

  const keyed = batch.filter((r) => r.key !== undefined && sessions.has(r.sessionId));
  const seen = new Map<string, { first_seq: number; count: number }>();
  if (keyed.length > 0) {
    const rows = await trx
      .selectFrom('idempotency')
      .select(['session_id', 'key', 'first_seq', 'count'])
      .where((eb) => eb(eb.refTuple('session_id', 'key'), 'in', keyed.map((r) => eb.tuple(r.sessionId, r.key!))))
      .execute();
    for (const row of rows) seen.set(keyOf(row.session_id, row.key), row);
  }

  const processedAt = new Date().toISOString();
  const outcomes: Settled<AppendOutcome>[] = [];
  const eventRows: NewEventRow[] = [];
  /** The webhook events these events stand for: committed with them or not at all (server/webhooks drains them); none without an endpoint. */
  const outboxRows: Insertable<WebhookOutboxTable>[] = [];
  const keyRows: Array<{ session_id: string; key: string; first_seq: number; count: number }> = [];
  /** Keys stored by this batch: a repeat within it gets the first request's events. */
  const storedNow = new Map<string, StoredEvent[]>();
  const replays: Array<{ at: number; sessionId: string; first: number; count: number }> = [];
  /** Row changes that go with this batch's events, in request order. */
  const patches: Array<{ sessionId: string; patch: SessionPatch }> = [];
  for (const [at, r] of batch.entries()) {
    try {
      const session = sessions.get(r.sessionId);
      if (!session) throw new NotFoundError('session', r.sessionId);
      // A retried request returns what its first attempt stored, whatever happened since.
      if (r.key !== undefined) {
        const mine = storedNow.get(keyOf(r.sessionId, r.key));
        if (mine) {
          outcomes.push({ ok: true, value: { appended: false, events: mine.map((e) => ({ ...e })) } });
          continue;
        }
        const old = seen.get(keyOf(r.sessionId, r.key));
        if (old) {
          replays.push({ at, sessionId: r.sessionId, first: old.first_seq, count: old.count });
          outcomes.push({ ok: true, value: { appended: false, events: [] } });
          continue;
        }
      }
      if (r.fence) checkFence(r.sessionId, r.fence, session);
      if (r.expectLastSeq !== undefined && r.expectLastSeq !== session.last_seq) {
        throw new SeqConflictError(r.sessionId, r.expectLastSeq, session.last_seq);
      }
      checkNotTerminated(r.sessionId, session.status, r.events);
      const stored: StoredEvent[] = r.events.map((e, i) => ({
        ...e,
        id: r.ids?.[i] ?? newId('sevt'),
        session_id: r.sessionId,
        seq: session.last_seq + 1 + i,
        processed_at: processedAt,
      }));
      stored.forEach((e, i) => {
        eventRows.push({ session_id: r.sessionId, seq: e.seq, id: e.id, type: e.type, processed_at: processedAt, payload: JSON.stringify(r.events[i]) });
        for (const w of logWebhooks(e)) outboxRows.push({ source_id: e.id, event_type: w.type, session_id: r.sessionId, session_thread_id: w.session_thread_id ?? null, seq: e.seq, occurred_at: processedAt });
      });
      if (r.key !== undefined) {
        keyRows.push({ session_id: r.sessionId, key: r.key, first_seq: session.last_seq + 1, count: stored.length });
        storedNow.set(keyOf(r.sessionId, r.key), stored);
      }
      session.last_seq += stored.length;
      // Side events (a hand attached to an idle session) leave the session's work state as it was.
      session.last_event_type = r.events.findLast((e) => !SIDE_EVENT_TYPES.has(e.type))?.type ?? session.last_event_type;
      // Terminated is final: no later status event (a harness finishing a step) revives the session.
      session.status = r.events.reduce<SessionStatus>((status, e) => (status === 'terminated' ? status : (STATUS_OF[e.type] ?? status)), session.status);
      session.touched = true;
      if (r.patch) patches.push({ sessionId: r.sessionId, patch: r.patch });
      for (const e of r.events) {
        if (STATUS_OF[e.type] !== undefined) session.waiting = { on: null, calls: e.type === 'session.status_idle' && e.stop_reason?.type === 'requires_action' ? e.stop_reason.event_ids : [] };
        const line = listedMessage(e);
        if (line !== null) session.lastMessage = line;
      }
      outcomes.push({ ok: true, value: { appended: true, events: stored } });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }

  for (const p of replays) {
    const events = await readEvents(
      cache,
      p.sessionId,
      trx.selectFrom('events').where('session_id', '=', p.sessionId).where('seq', '>=', p.first).where('seq', '<', p.first + p.count).orderBy('seq', 'asc'),
    );
    outcomes[p.at] = { ok: true, value: { appended: false, events } };
  }

  try {
    // What a requires_action idle waits for, from the calls it names (this batch's or stored ones).
    const named = [...sessions.values()].flatMap((s) => s.waiting?.calls ?? []);
    if (named.length > 0) {
      const calls = new Map(eventRows.filter((e) => named.includes(e.id)).map((e) => [e.id, e.payload]));
      const missing = named.filter((id) => !calls.has(id));
      if (missing.length > 0) for (const row of await trx.selectFrom('events').select(['id', 'payload']).where('id', 'in', missing).execute()) calls.set(row.id, row.payload);
      for (const s of sessions.values()) if (s.waiting && s.waiting.calls.length > 0) s.waiting.on = waitingOnFrom(s.waiting.calls.map((id) => calls.get(id)));
    }
    for (let i = 0; i < eventRows.length; i += INSERT_CHUNK) await trx.insertInto('events').values(eventRows.slice(i, i + INSERT_CHUNK)).execute();
    for (let i = 0; i < outboxRows.length; i += INSERT_CHUNK) await insertOutbox(trx, outboxRows.slice(i, i + INSERT_CHUNK));
    // The primary key (session_id, key) backs the lookup above: a key stored meanwhile by a
    // writer that did not hold the session fails here and rolls back rather than being stored twice.
    for (let i = 0; i < keyRows.length; i += INSERT_CHUNK) await trx.insertInto('idempotency').values(keyRows.slice(i, i + INSERT_CHUNK)).execute();
    // In the same transaction as the events: a session never shows a change its log does not say.
    for (const p of patches) await writePatch(trx, p.sessionId, p.patch, processedAt);
    const touched = [...sessions.values()].filter((s) => s.touched);
    for (let i = 0; i < touched.length; i += UPDATE_CHUNK) {
      const chunk = touched.slice(i, i + UPDATE_CHUNK);
      const one = chunk.length === 1 ? chunk[0] : undefined;
      if (one) {
        await trx
          .updateTable('sessions')
          .set({
            last_seq: one.last_seq,
            last_event_type: one.last_event_type,
            status: one.status,
            updated_at: processedAt,
            ...(one.waiting ? { waiting_on: one.waiting.on } : {}),
            ...(one.lastMessage !== undefined ? { last_message: one.lastMessage } : {}),
          })
          .where('id', '=', one.id)
          .execute();
        continue;
      }
      // One statement for many rows, joined to a table of their new values (SQLite ≥ 3.33 and
      // PostgreSQL both have UPDATE … FROM; the casts type PostgreSQL's parameters).
      // A column this batch leaves as it was is sent as null with a flag saying so.
      const values = sql.join(
        chunk.map((s) => sql`(${s.id}, ${s.last_seq}, ${s.last_event_type}, ${s.status}, ${s.waiting ? 1 : 0}, ${s.waiting?.on ?? null}, ${s.lastMessage ?? null})`),
      );
      await sql`with v(id, last_seq, last_event_type, status, waiting_set, waiting_on, last_message) as (values ${values})
        update sessions set last_seq = cast(v.last_seq as integer), last_event_type = cast(v.last_event_type as text),
          status = cast(v.status as text), updated_at = ${processedAt},
          waiting_on = case when cast(v.waiting_set as integer) = 1 then cast(v.waiting_on as text) else sessions.waiting_on end,
          last_message = coalesce(cast(v.last_message as text), sessions.last_message)
        from v where sessions.id = v.id`.execute(trx);
    }
  } catch (error) {
    onSharedWriteFailure();
    throw error;
  }
  return outcomes;
}

/**
 * The writer must hold the session's current lease: same epoch and (unless released since) same
 * owner. An expired lease nobody has taken over is still accepted: no one else can have written.
 */
function checkFence(id: string, fence: Fence, session: Pick<SessionRow, 'lease_owner' | 'lease_epoch'>): void {
  const sameEpoch = fence.epoch === session.lease_epoch;
  const sameOwner = session.lease_owner === null || session.lease_owner === fence.owner;
  if (!sameEpoch || !sameOwner) throw new StaleFenceError(id, fence.epoch, session.lease_epoch);
}

/**
 * A terminated session takes no more input: no `user.*` event after its `session.status_terminated`
 * (checked in the append's transaction, so an edge that read the session just before it ended
 * still cannot slip a message in). What the harness or a hand stores about itself is still taken.
 */
function checkNotTerminated(id: string, status: SessionStatus, events: readonly NewEvent[]): void {
  let ended = status === 'terminated';
  for (const e of events) {
    if (ended && e.type.startsWith('user.')) throw new ConflictError(terminatedMessage(id));
    if (e.type === 'session.status_terminated') ended = true;
  }
}

/** An event as a caller sent it, parsed by the one schema; a bad one is named by its place. */
export function validateEvent(event: unknown, index: number | null): NewEvent {
  const result = NewEventSchema.safeParse(event);
  if (result.success) return result.data;
  const where = index === null ? 'event' : `events[${index}]`;
  throw new InvalidInputError(`invalid ${where}: ${describeZodError(result.error)}`);
}
