import type { SessionAgent } from '~/lib/agent';
import type { BudgetLimit } from '~/lib/budget-limit';
import type { NewEvent, StoredEvent } from '~/lib/events';
import type { LiveRelay } from '~/server/session/notifier';
import type { WaitingOn } from '~/lib/waiting-on';

/** A session's row: metadata plus what the list view needs without reading the log. */
export interface Session {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  /** Derived from the last status event: `idle` until the harness starts work. */
  status: SessionStatus;
  last_seq: number;
  metadata: Record<string, string>;
  /** The agent the session runs (its version at creation, with overrides); null: the built-in default. */
  agent: SessionAgent | null;
  environment_id: string | null;
  archived_at: string | null;
  /** Stored and validated now; used once vaults and resources are built. */
  vault_ids: string[];
  resources: unknown[];
  /** Its spend ceiling at list prices; null: none. */
  budget: BudgetLimit | null;
  /** What an idle session waits for: a verdict on a call (`approval`), a client's result (`client`); null: nothing. */
  waiting_on: SessionWaitingOn | null;
  /** The first line of its newest user or agent message (at most LAST_MESSAGE_CHARS); null before any. */
  last_message: string | null;
}

export type SessionWaitingOn = WaitingOn;
export const LAST_MESSAGE_CHARS = 160;

export const DEFAULT_TITLE = 'New session';

export type SessionStatus = 'idle' | 'running' | 'rescheduling' | 'terminated';

/** What every edge (and the store itself) answers input to a terminated session: it is final. */
export const terminatedMessage = (sessionId: string) => `session ${sessionId} is terminated and takes no more events`;

export interface SessionInit {
  title?: string;
  metadata?: Record<string, string>;
  agent?: SessionAgent;
  environment_id?: string;
  vault_ids?: string[];
  resources?: unknown[];
  budget?: BudgetLimit | null;
}

export interface SessionPatch {
  title?: string;
  metadata?: Record<string, string>;
  /** true archives (keeps the first archive time), false un-archives. */
  archived?: boolean;
  /** A new ceiling; null removes it. */
  budget?: BudgetLimit | null;
  /** The session's agent, whole (an update of its tools or MCP servers). */
  agent?: SessionAgent;
  vault_ids?: string[];
}

export interface ListQuery {
  limit?: number;
  /** Opaque cursor from a previous page's `next_cursor` or `prev_cursor`. */
  cursor?: string | null;
  /** Which time orders the list (default: last activity, newest first). */
  by?: 'updated_at' | 'created_at';
  order?: 'asc' | 'desc';
  agentId?: string;
  agentVersion?: number;
  statuses?: readonly SessionStatus[];
  /** Archived sessions are listed unless this is false. */
  includeArchived?: boolean;
  /** Only sessions a docs widget started from this origin (`*`: from any). */
  widgetOrigin?: string;
  /** Only sessions created within these bounds (ISO-8601 times, any offset). */
  createdAt?: { gt?: string; gte?: string; lt?: string; lte?: string };
  /** Only sessions whose title contains this text (any case; `%` and `_` are plain characters). */
  titleContains?: string;
  /** true: only sessions waiting for a verdict on a call; false: none of those. */
  needsApproval?: boolean;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  /** The page before this one; null on the first. */
  prev_cursor?: string | null;
}

export interface EventSlice {
  /** First seq (inclusive). Negative counts from the end: -1 is the last event. */
  from?: number;
  /** Last seq (inclusive). */
  to?: number;
  types?: readonly string[];
  limit?: number;
  /** `desc`: the newest first (with `limit`, the last ones of the range). Default `asc`. */
  order?: 'asc' | 'desc';
  /** Bounds on `processed_at` (ISO timestamps, as the API's `created_at[gt]` … filters). */
  processedAt?: { gt?: string; gte?: string; lt?: string; lte?: string };
}

/** Proof of holding a session's lease; every harness append carries it. */
export interface Fence {
  sessionId: string;
  owner: string;
  epoch: number;
}

export interface EmitOptions {
  /** The same key twice returns the first stored event; nothing is appended again. */
  idempotencyKey?: string;
  /** Rejected with StaleFenceError when older than the session's lease epoch. */
  fence?: Fence;
  /** Rejected with SeqConflictError unless the log currently ends at this seq. */
  expectLastSeq?: number;
  /**
   * Ids chosen by the writer, by position in the batch (others are made here): the harness names
   * an agent.message before it is finished, so live previews carry the id it is stored under.
   */
  ids?: readonly (string | undefined)[];
  /**
   * Changes the session's row in the append's own transaction: a change and the event that says
   * so (`session.updated`) commit together or not at all. Not applied when a repeated key replays.
   */
  sessionPatch?: SessionPatch;
}

export interface WorkWaiting {
  id: string;
  leaseExpired: boolean;
}

/** The session rows: what a session is (its agent, title, status, metadata), not what happened in it. */
export interface SessionRows {
  createSession(init: SessionInit): Promise<Session>;
  getSession(id: string): Promise<Session | null>;
  /** Changes metadata only (the log is append-only); unknown id → NotFoundError. */
  updateSession(id: string, patch: SessionPatch): Promise<Session>;
  listSessions(q: ListQuery): Promise<Page<Session>>;
  /**
   * Deletes a session and everything stored for it (events, idempotency keys, tabs, claims).
   * The one exception to append-only: the user asked for it. Unknown id → NotFoundError.
   */
  deleteSession(id: string): Promise<void>;
}

/** The append-only log: reads, appends (fenced, keyed, expected-seq) and following it live. */
export interface EventLog {
  /** Carries live deltas to and from other server instances (PostgreSQL); absent for one instance. */
  readonly liveRelay?: LiveRelay | undefined;
  getEvents(id: string, slice?: EventSlice): Promise<StoredEvent[]>;
  emitEvent(id: string, event: NewEvent, opts?: EmitOptions): Promise<StoredEvent>;
  /**
   * Appends several events atomically (contiguous seqs, all or nothing). With an idempotency
   * key the whole batch is stored once: a repeat returns the first batch.
   */
  emitEvents(id: string, events: readonly NewEvent[], opts?: EmitOptions): Promise<StoredEvent[]>;
  /** Events after `afterSeq`, then live ones, in order, without gap or duplicate, until aborted. */
  follow(id: string, afterSeq: number, signal: AbortSignal): AsyncIterable<StoredEvent>;
}

/** Who runs a session: leases with their fencing epochs, and the queue of sessions that need a harness. */
export interface Leases {
  acquireLease(id: string, owner: string, ttlMs: number): Promise<Fence | null>;
  renewLease(fence: Fence, ttlMs: number): Promise<boolean>;
  /**
   * Ends a lease. `settledSeq`: the harness found nothing to do in the log up to that seq; unless
   * more was appended since, the session no longer counts as needing work.
   */
  releaseLease(fence: Fence, settledSeq?: number): Promise<void>;
  /**
   * Sessions whose log ends in something the harness must act on and whose lease is free, oldest
   * change first. `leaseExpired`: a harness held the lease and let it lapse (it died); otherwise
   * no harness holds it since it was released (the instance that stored the work is about to).
   */
  sessionsNeedingWork(limit: number): Promise<WorkWaiting[]>;
}

/** Browser hands' rows: which tabs are alive, and which tab claimed a call (exactly one). */
export interface TabClaims {
  /** A browser tab serving a session's browser hand says it is alive (on the lease clock). */
  touchTab(sessionId: string, hand: string, tabId: string): Promise<void>;
  /** The tabs of a browser hand seen within the last `withinMs`. */
  liveTabs(sessionId: string, hand: string, withinMs: number): Promise<string[]>;
  /** The first tab to claim a call runs it: returns the tab holding the claim (maybe another). */
  claimCall(sessionId: string, callId: string, tabId: string): Promise<string>;
  /** The tab holding a call's claim, or null while nobody has claimed it. */
  callClaim(sessionId: string, callId: string): Promise<string | null>;
  /**
   * Drops rows nobody will read again: tabs of browser hands that were released or lost, and
   * claims of calls that have their result. Returns how many rows went.
   */
  pruneHandRows(): Promise<{ tabs: number; claims: number }>;
}

/** The harness's stored folds of a log (derived data: a wake reads from the newest). */
export interface Checkpoints {
  /** The harness's newest stored fold of a session's log (opaque JSON text) and the seq it covers; null if none. */
  readCheckpoint(id: string): Promise<Checkpoint | null>;
  /**
   * Stores a fold of the log up to `seq`, unless one at a later seq is stored already. Derived
   * data, so unfenced: the log up to a seq never changes, and every writer folds it the same way.
   * For a session that does not exist, nothing is stored.
   */
  writeCheckpoint(id: string, checkpoint: Checkpoint): Promise<void>;
}

/** The whole store: the sum of its roles. A part takes only the roles it uses. */
export interface SessionStore extends SessionRows, EventLog, Leases, TabClaims, Checkpoints {
  close(): Promise<void>;
}

export interface Checkpoint {
  seq: number;
  body: string;
}
