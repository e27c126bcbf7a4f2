import 'server-only';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import type { Database } from '~/server/session/schema';
import { nonNegativeInt, positiveInt, ttl } from '~/server/session/session-rows';
import type { Fence, Leases, WorkWaiting } from '~/server/session/store';

/** A log ending in one of these needs nothing from the harness. */
const SETTLED_TYPES = ['session.status_idle', 'session.status_terminated'];

/** The lease clock's now, as SQL: the database's own clock when one is given, else this process's. */
export function nowOn(clock: (() => RawBuilder<number>) | undefined): RawBuilder<number> {
  return clock?.() ?? sql<number>`${Date.now()}`;
}

/**
 * Leases and the work queue on the sessions' rows: who runs a session now (a fence whose epoch
 * only grows), and which sessions have work no live lease covers. Times are on the lease clock
 * (the database's own when several machines share it).
 */
export class LeaseQueries implements Leases {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: (() => RawBuilder<number>) | undefined,
  ) {}

  private now(): RawBuilder<number> {
    return nowOn(this.clock);
  }

  private expiresIn(ttlMs: number): RawBuilder<number> {
    const clock = this.clock;
    return clock ? sql<number>`${clock()} + cast(${ttl(ttlMs)} as bigint)` : sql<number>`${Date.now() + ttl(ttlMs)}`;
  }

  async acquireLease(id: string, owner: string, ttlMs: number): Promise<Fence | null> {
    if (owner.length === 0) throw new InvalidInputError('owner: must not be empty');
    const now = this.now();
    const row = await this.db
      .updateTable('sessions')
      .set((eb) => ({ lease_owner: owner, lease_epoch: eb('lease_epoch', '+', 1), lease_expires_at: this.expiresIn(ttlMs) }))
      .where('id', '=', id)
      // Free or expired only: even the current owner must not re-acquire a live lease, so two
      // workers sharing an owner name still exclude each other.
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<', now)]))
      .returning('lease_epoch')
      .executeTakeFirst();
    if (row) return { sessionId: id, owner, epoch: row.lease_epoch };
    if (!(await this.exists(id))) throw new NotFoundError('session', id);
    return null;
  }

  async renewLease(fence: Fence, ttlMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('sessions')
      .set({ lease_expires_at: this.expiresIn(ttlMs) })
      .where('id', '=', fence.sessionId)
      .where('lease_owner', '=', fence.owner)
      .where('lease_epoch', '=', fence.epoch)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async releaseLease(fence: Fence, settledSeq?: number): Promise<void> {
    const settled =
      settledSeq === undefined
        ? {}
        : // Only if nothing was appended after what the harness read.
          { settled_seq: sql<number>`case when last_seq = ${nonNegativeInt('settledSeq', settledSeq)} then last_seq else settled_seq end` };
    // The epoch stays: fences handed out before stay older than any future acquire.
    await this.db
      .updateTable('sessions')
      .set({ lease_owner: null, lease_expires_at: null, ...settled })
      .where('id', '=', fence.sessionId)
      .where('lease_owner', '=', fence.owner)
      .where('lease_epoch', '=', fence.epoch)
      .execute();
  }

  async sessionsNeedingWork(limit: number): Promise<WorkWaiting[]> {
    const now = this.now();
    const rows = await this.db
      .selectFrom('sessions')
      .select(['id', 'lease_owner'])
      .where('status', '!=', 'terminated')
      .where('last_event_type', 'is not', null)
      .where('last_event_type', 'not in', SETTLED_TYPES)
      .whereRef('last_seq', '>', 'settled_seq')
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<', now)]))
      .orderBy('updated_at', 'asc')
      .orderBy('id', 'asc')
      .limit(positiveInt('limit', limit))
      .execute();
    return rows.map((r) => ({ id: r.id, leaseExpired: r.lease_owner !== null }));
  }

  /** Whether the session exists: a refusal on a row of a session that is gone says so by name. */
  private async exists(id: string): Promise<boolean> {
    return (await this.db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
