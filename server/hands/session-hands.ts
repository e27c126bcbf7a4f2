import 'server-only';
import type { HandEntry, HandScope } from '~/server/hands/hand-entry';

/** One session's hands as this process holds them. */
export interface SessionHands {
  sessionId: string;
  entries: Map<string, HandEntry>;
  /** When a call or request last looked at this session's hands (ms). */
  touchedAt: number;
  counter: number;
  /** The in-flight provisioning of the default hand, shared by parallel calls. */
  provisioningDefault: Promise<HandEntry> | null;
  /** The newest lease epoch this process has reconciled the session's hands for. */
  epoch: number;
  syncing: Promise<void> | null;
}

/** Makes a session's hands as held here agree with its log (`log-reconcile.ts`). */
export type Reconcile = (scope: HandScope, s: SessionHands) => Promise<void>;

/**
 * The per-session hand state of one process: read from the log on first touch, reconciled again
 * when a harness with a newer lease epoch arrives (the session may have run elsewhere meanwhile),
 * and let go of when idle.
 */
export class SessionHandsTable {
  private readonly sessions = new Map<string, Promise<SessionHands>>();
  /** The same sessions once read: what the reaper and the gauges walk without awaiting. */
  private readonly settled = new Map<string, SessionHands>();

  constructor(private readonly reconcile: Reconcile) {}

  async state(scope: HandScope, opts: { fresh?: boolean } = {}): Promise<SessionHands> {
    let pending = this.sessions.get(scope.sessionId);
    if (!pending) {
      const fresh: SessionHands = { sessionId: scope.sessionId, entries: new Map(), touchedAt: Date.now(), counter: 0, provisioningDefault: null, epoch: scope.epoch ?? 0, syncing: null };
      pending = this.reconcile(scope, fresh).then(() => fresh);
      this.sessions.set(scope.sessionId, pending);
      pending.then(
        (s) => this.settled.set(scope.sessionId, s),
        () => this.sessions.delete(scope.sessionId),
      );
      const s = await pending;
      if (s.syncing) await s.syncing;
      return s;
    }
    const s = await pending;
    s.touchedAt = Date.now();
    const newEpoch = scope.epoch !== undefined && scope.epoch > s.epoch;
    if (newEpoch) s.epoch = scope.epoch!;
    if (newEpoch || opts.fresh) {
      const previous = s.syncing ?? Promise.resolve();
      const run: Promise<void> = previous.then(() => this.reconcile(scope, s)).finally(() => {
        if (s.syncing === run) s.syncing = null;
      });
      s.syncing = run;
    }
    if (s.syncing) await s.syncing;
    return s;
  }

  /**
   * A hand by id. One this process has not seen may have been added through another instance
   * since it last read the log: look again before saying there is none.
   */
  async entry(scope: HandScope, id: string): Promise<{ s: SessionHands; e: HandEntry | undefined }> {
    let s = await this.state(scope);
    let e = s.entries.get(id);
    if (!e) {
      s = await this.state(scope, { fresh: true });
      e = s.entries.get(id);
    }
    return { s, e };
  }

  /** A session's hands if this process has read them (never reads the log). */
  held(sessionId: string): Promise<SessionHands> | undefined {
    return this.sessions.get(sessionId);
  }

  /** The sessions read so far, without awaiting. */
  settledSessions(): IterableIterator<SessionHands> {
    return this.settled.values();
  }

  settledSession(sessionId: string): SessionHands | undefined {
    return this.settled.get(sessionId);
  }

  knownSessions(): string[] {
    return [...this.sessions.keys()];
  }

  /** Every session's hands, then forgets them all. */
  async drain(): Promise<SessionHands[]> {
    const all = await Promise.all(this.sessions.values());
    this.sessions.clear();
    this.settled.clear();
    return all;
  }

  /** Forgets a session (deleted): its hands as they were, if this process had read them. */
  async forget(sessionId: string): Promise<SessionHands | null> {
    const pending = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    this.settled.delete(sessionId);
    return (await pending?.catch(() => null)) ?? null;
  }

  /**
   * Lets go of sessions that hold no hand process and were not used for `idleMs`: a busy server
   * does not keep every session it ever saw. Their hands are read from the log again on next use.
   */
  forgetIdle(now: number, idleMs: number): void {
    for (const [id, s] of this.settled) {
      const holds = [...s.entries.values()].some((e) => e.hand !== null || e.status === 'starting' || e.inFlight > 0 || e.resuming !== undefined || e.suspending !== undefined);
      if (holds || s.provisioningDefault || s.syncing || now - s.touchedAt < idleMs) continue;
      this.settled.delete(id);
      this.sessions.delete(id);
    }
  }
}
