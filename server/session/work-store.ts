import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { type ListPage, keysetWalk, pageOf } from '~/server/session/keyset-page';
import type { Database, WorkItemsTable } from '~/server/session/schema';

/**
 * The self-hosted work queue (not the harness's wake queue): rows in the session database, so
 * every instance on one PostgreSQL serves one queue. Each transition is one conditional UPDATE
 * (the claim also `FOR UPDATE SKIP LOCKED` on PostgreSQL), so exactly one caller wins it.
 */
export type WorkState = WorkItemsTable['state'];
export type WorkRow = WorkItemsTable;

export interface WorkItem {
  type: 'work';
  id: string;
  environment_id: string;
  data: { type: 'session'; id: string } | { type: 'healthcheck'; id: string };
  state: WorkState;
  metadata: Record<string, string>;
  /** Filled only by a poll (the item's credential for its worker); null everywhere else. */
  secret: string | null;
  created_at: string;
  acknowledged_at: string | null;
  started_at: string | null;
  latest_heartbeat_at: string | null;
  stop_requested_at: string | null;
  stopped_at: string | null;
  /** Paddock additions: the worker that last polled it, and why it stopped when no one stopped it. */
  worker_id: string | null;
  lost_reason: string | null;
}

export interface WorkStats {
  type: 'work_queue_stats';
  depth: number;
  pending: number;
  oldest_queued_at: string | null;
  workers_polling: number | null;
}

export interface HeartbeatAnswer {
  type: 'work_heartbeat';
  last_heartbeat: string;
  lease_extended: boolean;
  state: WorkState;
  ttl_seconds: number;
}

/** `expected_last_heartbeat` did not match: another worker may hold the lease. */
export class HeartbeatPreconditionError extends Error {
  constructor(readonly current: { last_heartbeat: string | null; lease_extended: false; state: WorkState; ttl_seconds: number }) {
    super(`expected_last_heartbeat does not match the stored heartbeat (${current.last_heartbeat ?? 'NO_HEARTBEAT'}): another worker may hold this item's lease`);
    this.name = 'HeartbeatPreconditionError';
  }
}

export const NO_HEARTBEAT = 'NO_HEARTBEAT';
/** A worker counts as polling this long after its last poll (the stats' `workers_polling`). */
const WORKERS_POLLING_MS = 30_000;
const LIVE: WorkState[] = ['starting', 'active', 'stopping'];

export function workItemOf(r: WorkRow, secret: string | null = null): WorkItem {
  return {
    type: 'work',
    id: r.id,
    environment_id: r.environment_id,
    data: r.data_type === 'session' ? { type: 'session', id: r.data_id } : { type: 'healthcheck', id: r.data_id },
    state: r.state,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    secret,
    created_at: r.created_at,
    acknowledged_at: r.acknowledged_at,
    started_at: r.started_at,
    latest_heartbeat_at: r.latest_heartbeat_at,
    stop_requested_at: r.stop_requested_at,
    stopped_at: r.stopped_at,
    worker_id: r.worker_id,
    lost_reason: r.lost_reason,
  };
}

const now = () => new Date().toISOString();

export class WorkStore {
  readonly #pg: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    /** A lease's length when the worker asks for none (PADDOCK_WORK_LEASE_SECONDS). */
    readonly defaultTtlSeconds = 300,
  ) {
    this.#pg = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /** The session's live item, made if it has none (one per session, whoever races). */
  async ensureSessionItem(environmentId: string, sessionId: string): Promise<{ item: WorkRow; created: boolean }> {
    const row: WorkRow = {
      id: newId('work'),
      environment_id: environmentId,
      data_type: 'session',
      data_id: sessionId,
      live_session_id: sessionId,
      state: 'queued',
      metadata: '{}',
      created_at: now(),
      polled_at: null,
      worker_id: null,
      acknowledged_at: null,
      started_at: null,
      latest_heartbeat_at: null,
      ttl_seconds: this.defaultTtlSeconds,
      lease_expires_at: null,
      stop_requested_at: null,
      stopped_at: null,
      lost_reason: null,
    };
    const inserted = await this.db.insertInto('work_items').values(row).onConflict((oc) => oc.column('live_session_id').doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { item: row, created: true };
    const live = await this.db.selectFrom('work_items').selectAll().where('live_session_id', '=', sessionId).executeTakeFirst();
    // Stopped between the insert and the read: try again (rare).
    return live ? { item: live, created: false } : this.ensureSessionItem(environmentId, sessionId);
  }

  /** A healthcheck item (a worker answers it by acking and stopping it). */
  async enqueueHealthcheck(environmentId: string): Promise<WorkRow> {
    const id = newId('work');
    const row: WorkRow = { id, environment_id: environmentId, data_type: 'healthcheck', data_id: id, live_session_id: null, state: 'queued', metadata: '{}', created_at: now(), polled_at: null, worker_id: null, acknowledged_at: null, started_at: null, latest_heartbeat_at: null, ttl_seconds: this.defaultTtlSeconds, lease_expires_at: null, stop_requested_at: null, stopped_at: null, lost_reason: null };
    await this.db.insertInto('work_items').values(row).execute();
    return row;
  }

  /**
   * Hands out the oldest queued item no poll holds (or one polled but not acked for longer than
   * `reclaimOlderThanMs`) to `workerId`; null when there is none. The outer conditions are checked
   * again on the row the update locks, so two pollers never both get one item.
   */
  async claim(environmentId: string, workerId: string | null, reclaimOlderThanMs: number): Promise<WorkRow | null> {
    const t = Date.now();
    const cutoff = t - reclaimOlderThanMs;
    const inner = this.db
      .selectFrom('work_items')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('state', '=', 'queued')
      .where((eb) => eb.or([eb('polled_at', 'is', null), eb('polled_at', '<', cutoff)]))
      .orderBy('created_at')
      .orderBy('id')
      .limit(1);
    const picked = this.#pg ? inner.forUpdate().skipLocked() : inner;
    const row = await this.db
      .updateTable('work_items')
      .set({ polled_at: t, worker_id: workerId })
      .where('id', '=', (eb) => eb.selectFrom(picked.as('p')).select('p.id'))
      .where('state', '=', 'queued')
      .where((eb) => eb.or([eb('polled_at', 'is', null), eb('polled_at', '<', cutoff)]))
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  }

  async recordPoll(environmentId: string, workerId: string): Promise<void> {
    await this.db
      .insertInto('work_workers')
      .values({ environment_id: environmentId, worker_id: workerId, last_poll_at: Date.now() })
      .onConflict((oc) => oc.columns(['environment_id', 'worker_id']).doUpdateSet({ last_poll_at: Date.now() }))
      .execute();
  }

  async get(environmentId: string, id: string): Promise<WorkRow> {
    const row = await this.db.selectFrom('work_items').selectAll().where('id', '=', id).where('environment_id', '=', environmentId).executeTakeFirst();
    if (!row) throw new NotFoundError('work item', id);
    return row;
  }

  /** The live item of this id, or null (stopped, or no such item): what an item's token opens. */
  async liveItem(id: string): Promise<WorkRow | null> {
    const row = await this.db.selectFrom('work_items').selectAll().where('id', '=', id).executeTakeFirst();
    return row && row.state !== 'stopped' ? row : null;
  }

  /** queued → starting: the item leaves the queue; its lease runs from now. */
  async ack(environmentId: string, id: string): Promise<WorkRow> {
    const t = Date.now();
    const row = await this.db
      .updateTable('work_items')
      .set({ state: 'starting', acknowledged_at: new Date(t).toISOString(), lease_expires_at: sql<number>`cast(${t} as bigint) + ttl_seconds * 1000` })
      .where('id', '=', id)
      .where('environment_id', '=', environmentId)
      .where('state', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    if (row) return row;
    const current = await this.get(environmentId, id);
    throw new ConflictError(`work item ${id} is ${current.state}: only a queued item can be acknowledged`);
  }

  /**
   * Extends the lease when `expected` is the stored heartbeat (NO_HEARTBEAT: none yet), in one
   * conditional UPDATE. A stopping or stopped item is not compared: its answer says the lease was
   * not extended, which tells the worker to shut down. A lease already past its expiry is lost.
   */
  async heartbeat(environmentId: string, id: string, expected: string | undefined, desiredTtl: number | undefined): Promise<HeartbeatAnswer> {
    const current = await this.get(environmentId, id);
    const answer = (r: WorkRow, extended: boolean): HeartbeatAnswer => ({ type: 'work_heartbeat', last_heartbeat: r.latest_heartbeat_at ?? '', lease_extended: extended, state: r.state, ttl_seconds: r.ttl_seconds });
    if (current.state === 'stopping' || current.state === 'stopped') return answer(current, false);
    if (current.state === 'queued') throw new ConflictError(`work item ${id} is queued: acknowledge it before its first heartbeat`);
    const stored = current.latest_heartbeat_at ?? NO_HEARTBEAT;
    const refuse = (r: WorkRow) => new HeartbeatPreconditionError({ last_heartbeat: r.latest_heartbeat_at, lease_extended: false, state: r.state, ttl_seconds: r.ttl_seconds });
    if (expected !== undefined && expected !== stored) throw refuse(current);
    const t = Date.now();
    if (current.lease_expires_at !== null && Number(current.lease_expires_at) < t) throw refuse(current);
    const ttl = Math.max(1, Math.min(desiredTtl ?? current.ttl_seconds, 3600));
    const beat = new Date(t).toISOString();
    const row = await this.db
      .updateTable('work_items')
      .set({ state: 'active', started_at: current.started_at ?? beat, latest_heartbeat_at: beat, ttl_seconds: ttl, lease_expires_at: t + ttl * 1000 })
      .where('id', '=', id)
      .where('state', 'in', ['starting', 'active'])
      .where((eb) => (current.latest_heartbeat_at === null ? eb('latest_heartbeat_at', 'is', null) : eb('latest_heartbeat_at', '=', current.latest_heartbeat_at)))
      .where('lease_expires_at', '>=', t)
      .returningAll()
      .executeTakeFirst();
    if (row) return answer(row, true);
    const after = await this.get(environmentId, id);
    if (after.state === 'stopping' || after.state === 'stopped') return answer(after, false);
    throw refuse(after);
  }

  /** Stops an item: at once with `force`, else it becomes `stopping` (its next heartbeat tells the worker). */
  async stop(environmentId: string, id: string, force: boolean): Promise<{ row: WorkRow; stopped: boolean }> {
    const current = await this.get(environmentId, id);
    if (current.state === 'stopped') throw new ConflictError(`work item ${id} is already stopped`);
    const t = now();
    const stopNow = force || current.state === 'queued';
    const row = await this.db
      .updateTable('work_items')
      .set(stopNow ? { state: 'stopped', stopped_at: t, live_session_id: null, stop_requested_at: current.stop_requested_at ?? t } : { state: 'stopping', stop_requested_at: t })
      .where('id', '=', id)
      .where('state', '=', current.state)
      .returningAll()
      .executeTakeFirst();
    if (!row) return this.stop(environmentId, id, force);
    return { row, stopped: stopNow };
  }

  /** Stops a deleted session's live item, if it has one: its worker sees it stopped and lets go. */
  async stopSessionItem(sessionId: string): Promise<WorkRow | null> {
    const t = now();
    const row = await this.db
      .updateTable('work_items')
      .set((eb) => ({ state: 'stopped', stopped_at: t, live_session_id: null, stop_requested_at: eb.fn.coalesce('stop_requested_at', eb.val(t)) }))
      .where('live_session_id', '=', sessionId)
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  }

  /** Live items whose lease passed without a heartbeat (oldest expiry first). */
  dueLeases(limit = 100): Promise<WorkRow[]> {
    return this.db.selectFrom('work_items').selectAll().where('state', 'in', LIVE).where('lease_expires_at', '<', Date.now()).orderBy('lease_expires_at').limit(limit).execute();
  }

  /** Stops an item as lost if its lease is still past due; returned to exactly one caller. */
  async markLost(id: string): Promise<WorkRow | null> {
    const t = Date.now();
    const row = await this.db
      .updateTable('work_items')
      .set({ state: 'stopped', stopped_at: new Date(t).toISOString(), live_session_id: null, lost_reason: sql<string>`'no heartbeat for ' || ttl_seconds || 's'` })
      .where('id', '=', id)
      .where('state', 'in', LIVE)
      .where('lease_expires_at', '<', t)
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  }

  async updateMetadata(environmentId: string, id: string, patch: Record<string, string | null>): Promise<WorkRow> {
    const current = await this.get(environmentId, id);
    const metadata = JSON.parse(current.metadata) as Record<string, string>;
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete metadata[k];
      else metadata[k] = v;
    }
    await this.db.updateTable('work_items').set({ metadata: JSON.stringify(metadata) }).where('id', '=', id).execute();
    return { ...current, metadata: JSON.stringify(metadata) };
  }

  /** Newest first. */
  async list(environmentId: string, q: { limit: number; page?: string | undefined }): Promise<ListPage<WorkRow>> {
    const scope = `work:${environmentId}`;
    const after = q.page ? decodeCursor(q.page, scope, [z.string(), z.string()]) : null;
    const rows = await keysetWalk(this.db.selectFrom('work_items').selectAll().where('environment_id', '=', environmentId), {
      key: 'created_at',
      id: 'id',
      walk: 'desc',
      after: after && { key: after[0], id: after[1] },
      limit: q.limit,
    }).execute();
    return pageOf(rows, q.limit, (last) => encodeCursor(scope, [last.created_at, last.id]));
  }

  async stats(environmentId: string): Promise<WorkStats> {
    const queued = await this.db
      .selectFrom('work_items')
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.fn.count<number>('polled_at').as('polled'),
        eb.fn.min('created_at').as('oldest'),
      ])
      .where('environment_id', '=', environmentId)
      .where('state', '=', 'queued')
      .executeTakeFirstOrThrow();
    const workers = await this.db
      .selectFrom('work_workers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('environment_id', '=', environmentId)
      .where('last_poll_at', '>=', Date.now() - WORKERS_POLLING_MS)
      .executeTakeFirstOrThrow();
    const n = Number(queued.n);
    const pending = Number(queued.polled);
    return { type: 'work_queue_stats', depth: n - pending, pending, oldest_queued_at: queued.oldest ?? null, workers_polling: Number(workers.n) };
  }
}
