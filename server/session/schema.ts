import type { Insertable, Selectable } from 'kysely';
import type { SessionStatus } from '~/server/session/store';

/**
 * The session store's tables, typed once for both SQLite and PostgreSQL. Only portable column
 * types are used: text, integer, bigint. Timestamps shown to users are ISO-8601 UTC text (they
 * sort as text); lease expiry is epoch milliseconds, compared numerically.
 *
 * Note for the PostgreSQL store: node-postgres returns `bigint` as a string by default, so it
 * must install a parser for int8 (OID 20) before `lease_expires_at` can be read as a number.
 */
export interface Database {
  sessions: SessionsTable;
  events: EventsTable;
  idempotency: IdempotencyTable;
  hand_tabs: HandTabsTable;
  call_claims: CallClaimsTable;
}

export interface SessionsTable {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  /** Derived from the last status event; the store only ever writes a SessionStatus. */
  status: SessionStatus;
  /** Seq of the newest event, 0 for an empty log. The next append uses last_seq + 1. */
  last_seq: number;
  /**
   * Type of the newest event that is not a side event (SIDE_EVENT_TYPES): what
   * sessionsNeedingWork() looks at, without reading the log.
   */
  last_event_type: string | null;
  /** A harness found nothing to do in the log up to this seq: the sweeper leaves it alone until more arrives. */
  settled_seq: number;
  /** JSON text of a Record<string, string>. */
  metadata: string;
  lease_owner: string | null;
  /** Bumped on every acquire and never lowered: a fence older than this is stale. */
  lease_epoch: number;
  /** Epoch milliseconds; null when nobody holds the lease. */
  lease_expires_at: number | null;
}

export interface EventsTable {
  session_id: string;
  seq: number;
  id: string;
  type: string;
  processed_at: string;
  /** JSON text of the validated NewEvent (including `type`). */
  payload: string;
}

/** One row per idempotency key: the batch it stored is seqs first_seq … first_seq + count - 1. */
export interface IdempotencyTable {
  session_id: string;
  key: string;
  first_seq: number;
  count: number;
}

/** A browser tab serving a session's browser hand, and when it last said so (lease clock, ms). */
export interface HandTabsTable {
  session_id: string;
  hand: string;
  tab_id: string;
  seen_at: number;
}

/** The tab that runs a browser hand's call: the first to claim it. */
export interface CallClaimsTable {
  session_id: string;
  call_id: string;
  tab_id: string;
}

export type SessionRow = Selectable<SessionsTable>;
export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;
