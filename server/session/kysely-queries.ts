import 'server-only';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { keysetWalk, whereTimeRange } from '~/server/session/keyset-page';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { InvalidInputError, NotFoundError, isStoreUnavailable } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { ID_PATTERN, newId } from '~/lib/ids';
import { GroupCommit, type Settled } from '~/server/session/group-commit';
import { type LiveRelay, type Notifier, WakeUp } from '~/server/session/notifier';
import type { Database, SessionRow, Tx } from '~/server/session/schema';
import { type AppendOutcome, type AppendRequest, appendAll, validateEvent } from '~/server/session/append-batch';
import { PayloadCache, readEvents } from '~/server/session/payload-cache';
import { LeaseQueries } from '~/server/session/lease-queries';
import { TabClaimQueries } from '~/server/session/tab-claim-queries';
import { CheckpointQueries } from '~/server/session/checkpoint-queries';
import { type SessionExtra, integer, positiveInt, toSession } from '~/server/session/session-rows';
import { checkPatch, writePatch } from '~/server/session/session-patch';
import {
  type Checkpoint,
  DEFAULT_TITLE,
  type EmitOptions,
  type EventSlice,
  type Fence,
  type ListQuery,
  type Page,
  type Session,
  type SessionInit,
  type SessionPatch,
  type SessionStore,
  type WorkWaiting,
} from '~/server/session/store';

/**
 * The session store written once in Kysely, for every SQL backend (SQLite, PostgreSQL). The
 * queries are portable; what differs between databases is only how a transaction is run, which
 * a backend supplies as a StoreBackend.
 */

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;
const FOLLOW_BATCH = 500;

export type { Tx } from '~/server/session/schema';

/** What a database contributes to the shared store: how its transactions run. */
export interface StoreBackend {
  /**
   * Runs work in a write transaction and resolves after its commit (a batch of appends, a
   * deletion). Appends to one session must be serialized by the database: SQLite's `begin
   * immediate` does it for the whole file; on PostgreSQL set `lockSessionRow`.
   */
  appendTransaction<T>(work: (trx: Tx) => Promise<T>): Promise<T>;
  /** Batches of appends committed at once (default 1: SQLite has one writer anyway). */
  appendConcurrency?: number;
  /** Runs reads that must all see one snapshot (read-only). */
  readSnapshot<T>(work: (trx: Tx) => Promise<T>): Promise<T>;
  /** Read the session rows of an append batch with `select … for update` (not valid SQL in SQLite). */
  lockSessionRow: boolean;
  /** Runs after the database was closed: releases what the backend owns besides it. */
  afterClose?(): Promise<void>;
  /**
   * The clock leases run on, in ms since the epoch, as SQL. On a database several machines
   * share, the database's own clock, so instances whose clocks disagree still agree on who
   * holds a lease. Default: this process's clock (right for SQLite, one machine).
   */
  leaseClock?: () => RawBuilder<number>;
}

export class KyselySessionStore implements SessionStore {
  /** Ends every follow() when the store closes, instead of leaving them to fail on a closed db. */
  readonly #closing = new AbortController();
  readonly #backend: StoreBackend;
  /** Parsed payloads of this store's events (see payload-cache.ts). */
  readonly #payloads = new PayloadCache();

  /** Appends of any sessions that arrive together share one transaction (see group-commit.ts). */
  readonly #appends: GroupCommit<AppendRequest, AppendOutcome>;
  readonly #leases: LeaseQueries;
  readonly #tabs: TabClaimQueries;
  readonly #checkpoints: CheckpointQueries;

  constructor(
    /** Exposed for backend-specific checks (pragmas, migrations); go through the methods otherwise. */
    readonly db: Kysely<Database>,
    readonly notifier: Notifier,
    backend: StoreBackend,
  ) {
    this.#backend = backend;
    this.#appends = new GroupCommit((batch) => this.#appendBatch(batch), { concurrency: backend.appendConcurrency ?? 1 });
    this.#leases = new LeaseQueries(db, backend.leaseClock);
    this.#tabs = new TabClaimQueries(db, backend.leaseClock);
    this.#checkpoints = new CheckpointQueries(db);
  }

  /**
   * Commits a batch of appends as one transaction. A request refused by the checks (unknown
   * session, stale fence, seq conflict) fails alone. Should a shared write fail instead (say a
   * writer-chosen event id already taken), nothing of the batch is stored, and each append is
   * tried again in a transaction of its own, so only the one at fault fails.
   */
  async #appendBatch(batch: readonly AppendRequest[]): Promise<Settled<AppendOutcome>[]> {
    let sharedWriteFailed = false;
    try {
      return await this.#backend.appendTransaction((trx) =>
        appendAll(trx, this.#payloads, batch, this.#backend.lockSessionRow, () => {
          sharedWriteFailed = true;
        }),
      );
    } catch (error) {
      // Not after a failed commit (whose outcome is unknown), nor with the database gone.
      if (!sharedWriteFailed || batch.length === 1 || isStoreUnavailable(error)) throw error;
      return Promise.all(
        batch.map((req) =>
          this.#appendBatch([req]).then(
            ([one]) => one ?? { ok: false as const, error: new Error('append: no outcome') },
            (e: unknown) => ({ ok: false as const, error: e }),
          ),
        ),
      );
    }
  }

  get liveRelay(): LiveRelay | undefined {
    return this.notifier.relay;
  }

  async createSession(init: SessionInit): Promise<Session> {
    const now = new Date().toISOString();
    const row: SessionRow = {
      id: newId('sesn'),
      title: init.title ?? DEFAULT_TITLE,
      created_at: now,
      updated_at: now,
      status: 'idle',
      last_seq: 0,
      last_event_type: null,
      settled_seq: 0,
      metadata: JSON.stringify(init.metadata ?? {}),
      lease_owner: null,
      lease_epoch: 0,
      lease_expires_at: null,
      agent: init.agent ? JSON.stringify(init.agent) : null,
      agent_id: init.agent?.id ?? null,
      agent_version: init.agent?.version ?? null,
      environment_id: init.environment_id ?? null,
      archived_at: null,
      extra: JSON.stringify({ vault_ids: init.vault_ids ?? [], resources: init.resources ?? [], budget: init.budget ?? null } satisfies SessionExtra),
      waiting_on: null,
      last_message: null,
    };
    await this.db.insertInto('sessions').values(row).execute();
    return toSession(row);
  }

  async getSession(id: string): Promise<Session | null> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async updateSession(id: string, patch: SessionPatch): Promise<Session> {
    checkPatch(patch);
    const now = new Date().toISOString();
    return patch.vault_ids !== undefined || patch.budget !== undefined ? this.db.transaction().execute((trx) => writePatch(trx, id, patch, now)) : writePatch(this.db, id, patch, now);
  }

  async listSessions(q: ListQuery): Promise<Page<Session>> {
    // Over-large pages are clamped rather than refused: a client asking for more gets a cursor.
    const limit = Math.min(positiveInt('limit', q.limit ?? DEFAULT_PAGE), MAX_PAGE);
    const by = q.by ?? 'updated_at';
    const order = q.order ?? 'desc';
    const scope = `sessions:${by}`;
    const cursor = q.cursor ? decodeCursor(q.cursor, scope, [z.string(), z.string(), z.enum(['next', 'prev'])]) : null;
    // A "previous page" cursor walks the other way from its row; the page is turned back after.
    const backwards = cursor?.[2] === 'prev';
    const walk = backwards ? (order === 'asc' ? 'desc' : 'asc') : order;
    let query = this.db.selectFrom('sessions').selectAll();
    if (q.agentId !== undefined) query = query.where('agent_id', '=', q.agentId);
    if (q.agentVersion !== undefined) query = query.where('agent_version', '=', q.agentVersion);
    if (q.statuses && q.statuses.length > 0) query = query.where('status', 'in', [...q.statuses]);
    if (q.includeArchived === false) query = query.where('archived_at', 'is', null);
    query = whereTimeRange(query, 'created_at', 'createdAt', q.createdAt);
    if (q.titleContains !== undefined && q.titleContains !== '') {
      const pattern = `%${q.titleContains.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where(sql<boolean>`lower(title) like ${pattern} escape '\\'`);
    }
    if (q.needsApproval === true) query = query.where('waiting_on', '=', 'approval');
    if (q.needsApproval === false) query = query.where((eb) => eb.or([eb('waiting_on', 'is', null), eb('waiting_on', '!=', 'approval')]));
    // Sessions a docs widget started (from one origin, or any).
    if (q.widgetOrigin !== undefined) {
      const origin = q.widgetOrigin;
      query = query.where('id', 'in', (eb) => {
        const w = eb.selectFrom('widget_sessions').select('session_id');
        return origin === '*' ? w : w.where('origin', '=', origin);
      });
    }
    // One extra row tells whether another page exists. Both keys are fixed-format ASCII (ISO-8601,
    // prefixed ULIDs), which sort the same under byte order and the usual PostgreSQL collations (C, en_US…).
    const rows = await keysetWalk(query, { key: by, id: 'id', walk, after: cursor && { key: cursor[0], id: cursor[1] }, limit }).execute();
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    if (backwards) page.reverse();
    const first = page[0];
    const last = page.at(-1);
    const hasNext = backwards ? true : more;
    const hasPrev = backwards ? more : cursor !== null;
    return {
      data: page.map(toSession),
      next_cursor: hasNext && last ? encodeCursor(scope, [last[by], last.id, 'next']) : null,
      prev_cursor: hasPrev && first ? encodeCursor(scope, [first[by], first.id, 'prev']) : null,
    };
  }

  async getEvents(id: string, slice: EventSlice = {}): Promise<StoredEvent[]> {
    const from = slice.from === undefined ? undefined : integer('from', slice.from);
    const to = slice.to === undefined ? undefined : integer('to', slice.to);
    const limit = slice.limit === undefined ? undefined : positiveInt('limit', slice.limit);
    // One snapshot, so a negative `from` is resolved against the same log it slices.
    return this.#backend.readSnapshot(async (trx) => {
      const session = await trx.selectFrom('sessions').select('last_seq').where('id', '=', id).executeTakeFirst();
      if (!session) throw new NotFoundError('session', id);
      const first = from === undefined ? 1 : from < 0 ? Math.max(1, session.last_seq + from + 1) : Math.max(1, from);
      let query = trx.selectFrom('events').where('session_id', '=', id).where('seq', '>=', first);
      if (to !== undefined) query = query.where('seq', '<=', to);
      // An empty list means "no filter": it is what an absent query parameter parses to.
      if (slice.types && slice.types.length > 0) query = query.where('type', 'in', [...slice.types]);
      query = whereTimeRange(query, 'processed_at', 'processedAt', slice.processedAt);
      query = query.orderBy('seq', slice.order === 'desc' ? 'desc' : 'asc');
      if (limit !== undefined) query = query.limit(limit);
      return readEvents(this.#payloads, id, query);
    });
  }

  async emitEvent(id: string, event: NewEvent, opts?: EmitOptions): Promise<StoredEvent> {
    const [first] = await this.emitEvents(id, [event], opts);
    // emitEvents never returns an empty list for a non-empty batch; this keeps the type honest.
    if (!first) throw new Error(`emitEvent stored nothing for ${id}`);
    return first;
  }

  async emitEvents(id: string, events: readonly NewEvent[], opts: EmitOptions = {}): Promise<StoredEvent[]> {
    if (events.length === 0) throw new InvalidInputError('events: at least one event is required');
    // Validate everything before touching the database: a bad event anywhere writes nothing.
    const parsed = events.map((e, i) => validateEvent(e, events.length > 1 ? i : null));
    const key = opts.idempotencyKey;
    if (key !== undefined && key.length === 0) throw new InvalidInputError('idempotencyKey: must not be empty');
    if (opts.expectLastSeq !== undefined && (!Number.isInteger(opts.expectLastSeq) || opts.expectLastSeq < 0)) {
      throw new InvalidInputError('expectLastSeq: must be a non-negative integer');
    }
    if (opts.ids?.some((x) => x !== undefined && !ID_PATTERN.event.test(x))) throw new InvalidInputError('ids: each must be an event id (sevt_…)');
    if (opts.sessionPatch) checkPatch(opts.sessionPatch);
    if (opts.fence && opts.fence.sessionId !== id) {
      throw new InvalidInputError(`fence: belongs to session ${opts.fence.sessionId}, not ${id}`);
    }

    const outcome = await this.#appends.submit({ sessionId: id, events: parsed, key, expectLastSeq: opts.expectLastSeq, fence: opts.fence, ids: opts.ids, patch: opts.sessionPatch });

    // Committed: what was just validated is what a read would parse (the process that writes a
    // session's events usually reads them next, for its next step or a follower).
    if (outcome.appended) for (const e of outcome.events) this.#payloads.rememberStored(e);
    const last = outcome.events.at(-1);
    // Only after the commit: a follower woken earlier could read before the rows are visible.
    if (outcome.appended && last) this.notifier.notify(id, last.seq);
    return outcome.events;
  }

  async *follow(id: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<StoredEvent, void, undefined> {
    let cursor = afterSeq === 0 ? 0 : positiveInt('afterSeq', afterSeq);
    const stop = AbortSignal.any([signal, this.#closing.signal]);
    if (stop.aborted) return;
    // Subscribe before the first read, so an append racing with the read still wakes us.
    const wake = new WakeUp(this.notifier, id);
    try {
      if (!(await this.getSession(id))) throw new NotFoundError('session', id);
      while (!stop.aborted) {
        const rows = await readEvents(this.#payloads, id, this.db.selectFrom('events').where('session_id', '=', id).where('seq', '>', cursor).orderBy('seq', 'asc').limit(FOLLOW_BATCH));
        for (const event of rows) {
          if (stop.aborted) return;
          cursor = event.seq;
          yield event;
        }
        // A full batch may have more behind it; otherwise sleep until a hint or the abort.
        if (rows.length < FOLLOW_BATCH) await wake.wait(stop);
      }
    } finally {
      wake.close();
    }
  }

  /** Now, on the lease clock. */
  // The roles kept in their own files; the store is their sum.
  acquireLease(id: string, owner: string, ttlMs: number): Promise<Fence | null> {
    return this.#leases.acquireLease(id, owner, ttlMs);
  }

  renewLease(fence: Fence, ttlMs: number): Promise<boolean> {
    return this.#leases.renewLease(fence, ttlMs);
  }

  releaseLease(fence: Fence, settledSeq?: number): Promise<void> {
    return this.#leases.releaseLease(fence, settledSeq);
  }

  sessionsNeedingWork(limit: number): Promise<WorkWaiting[]> {
    return this.#leases.sessionsNeedingWork(limit);
  }

  touchTab(sessionId: string, hand: string, tabId: string): Promise<void> {
    return this.#tabs.touchTab(sessionId, hand, tabId);
  }

  liveTabs(sessionId: string, hand: string, withinMs: number): Promise<string[]> {
    return this.#tabs.liveTabs(sessionId, hand, withinMs);
  }

  claimCall(sessionId: string, callId: string, tabId: string): Promise<string> {
    return this.#tabs.claimCall(sessionId, callId, tabId);
  }

  callClaim(sessionId: string, callId: string): Promise<string | null> {
    return this.#tabs.callClaim(sessionId, callId);
  }

  pruneHandRows(): Promise<{ tabs: number; claims: number }> {
    return this.#tabs.pruneHandRows();
  }

  readCheckpoint(id: string): Promise<Checkpoint | null> {
    return this.#checkpoints.readCheckpoint(id);
  }

  writeCheckpoint(id: string, checkpoint: Checkpoint): Promise<void> {
    return this.#checkpoints.writeCheckpoint(id, checkpoint);
  }

  async deleteSession(id: string): Promise<void> {
    const deleted = await this.#backend.appendTransaction(async (trx) => {
      // Children first: the foreign keys cascade, but SQLite only does so with a pragma set.
      for (const table of ['events', 'idempotency', 'hand_tabs', 'call_claims', 'share_links', 'widget_sessions', 'session_checkpoints', 'session_thread_archives'] as const) await trx.deleteFrom(table).where('session_id', '=', id).execute();
      const r = await trx.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    if (deleted === 0) throw new NotFoundError('session', id);
  }

  /** Forgets every parsed payload: a bench times reads as a process that just started would. */
  forgetParsedPayloads(): void {
    this.#payloads.forget();
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.db.destroy();
    await this.#backend.afterClose?.();
  }
}

