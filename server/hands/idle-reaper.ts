import 'server-only';
import { errorFields, logger } from '~/server/log';

const log = logger('hands.reaper');

/** A hand process this server runs, as the reaper sees it. */
export interface LiveHand {
  sessionId: string;
  hand: string;
  /** When a call last started or ended on it (ms). */
  lastUsed: number;
  /** Calls running on it now: a busy hand is never suspended. */
  inFlight: number;
}

/** Why a hand was suspended: idle, past the live-hands cap, or the server stopping (its files wait for the next start). */
export type SuspendReason = 'idle' | 'cap' | 'shutdown';

export interface ReaperLimits {
  /** A hand idle this long is suspended. */
  idleMs: number;
  /** At most this many live hand processes; past it the least recently used idle ones are suspended. */
  maxLive: number;
}

/**
 * Which hands to suspend now, and why. Pure. Idle ones first; then, while more than `maxLive`
 * stay live, the least recently used that are not busy. `keep` (a hand just started for a call)
 * is never picked: over the cap with every other hand busy, the server runs one hand more
 * rather than stopping the one a call is waiting for.
 */
export function handsToSuspend(live: readonly LiveHand[], now: number, limits: ReaperLimits, keep?: { sessionId: string; hand: string }): { hand: LiveHand; reason: SuspendReason }[] {
  const kept = (h: LiveHand) => keep !== undefined && h.sessionId === keep.sessionId && h.hand === keep.hand;
  const out: { hand: LiveHand; reason: SuspendReason }[] = [];
  const rest: LiveHand[] = [];
  for (const h of live) {
    if (!kept(h) && h.inFlight === 0 && now - h.lastUsed >= limits.idleMs) out.push({ hand: h, reason: 'idle' });
    else rest.push(h);
  }
  let count = rest.length;
  const lru = rest.filter((h) => !kept(h) && h.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed);
  for (const h of lru) {
    if (count <= limits.maxLive) break;
    out.push({ hand: h, reason: 'cap' });
    count -= 1;
  }
  return out;
}

/** What the reaper needs from the hand registry. */
export interface ReapTarget {
  liveHands(): LiveHand[];
  suspend(sessionId: string, hand: string, reason: SuspendReason): Promise<void>;
  /** Drops what it holds of sessions with no live hand and no use for `idleMs`. */
  forgetIdleSessions(now: number, idleMs: number): void;
}

/**
 * Frees the machine from hands nobody uses: every tick suspends idle hands (their workspaces
 * stay) and drops registry state of idle sessions (rebuilt from the log on next use); `enforce`
 * keeps live hands under the cap when one more starts.
 */
export class IdleReaper {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly target: ReapTarget,
    readonly limits: ReaperLimits,
  ) {}

  start(): this {
    // Often enough that a hand is suspended within a quarter of its idle time; unref'd so the
    // reaper never keeps a process alive by itself.
    const every = Math.max(50, Math.min(5_000, Math.floor(this.limits.idleMs / 4)));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass: suspend idle hands, forget idle sessions. */
  tick(now = Date.now()): Promise<void> {
    return this.serial(async () => {
      await this.suspendAll(handsToSuspend(this.target.liveHands(), now, this.limits));
      // Sessions are forgotten after at most 10 minutes even when hands never idle out.
      this.target.forgetIdleSessions(now, Math.min(this.limits.idleMs, 10 * 60_000));
    });
  }

  /** After a hand became live: suspend the least recently used ones past the cap. */
  enforce(keep: { sessionId: string; hand: string }): Promise<void> {
    const now = Date.now();
    const picked = handsToSuspend(this.target.liveHands(), now, { idleMs: Number.POSITIVE_INFINITY, maxLive: this.limits.maxLive }, keep);
    return this.serial(() => this.suspendAll(picked));
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.running.then(fn).catch((e: unknown) => log.error('reaper pass failed', errorFields(e)));
    this.running = run;
    return run;
  }

  private async suspendAll(picked: { hand: LiveHand; reason: SuspendReason }[]): Promise<void> {
    await Promise.all(picked.map(({ hand, reason }) => this.target.suspend(hand.sessionId, hand.hand, reason)));
  }
}
