import 'server-only';
import type { Hand } from '~/lib/hand';
import type { ProvisionSpec, Provisioner, SandboxSpec } from '~/server/hands/provisioner';
import { errorFields, logger } from '~/server/log';

const log = logger('hands.pool');

/** How long without a miss before the pool shrinks back by one toward its base size. */
const SHRINK_AFTER_MS = 60_000;

/**
 * Pre-started sandbox hands with the default policy, so a session's first tool call waits
 * milliseconds instead of a process start. A pooled hand is fresh (its own new workspace) and
 * is handed out once: it is never returned to the pool or shared across sessions.
 *
 * The pool follows demand: every miss (a take that found it empty) grows its target by one, up to
 * `max`, and a minute without one shrinks it back toward `size`. A take that misses while hands are
 * starting waits for the next of them rather than starting one more from scratch.
 */
export class WarmPool {
  private readonly ready: Hand[] = [];
  private readonly waiters: Array<(hand: Hand | null) => void> = [];
  /** Starts in flight: close() waits for them, so no hand outlives the pool (or its files, its folder). */
  private readonly inFlight = new Set<Promise<void>>();
  private starting = 0;
  private closed = false;
  private seq = 0;
  private target: number;
  private lastMiss = 0;

  constructor(
    private readonly provisioner: Provisioner,
    private readonly spec: SandboxSpec,
    private readonly size: number,
    private readonly max: number = size,
  ) {
    this.target = size;
  }

  /** How many hands the pool keeps ready now (between `size` and `max`). */
  get targetSize(): number {
    return this.target;
  }

  /** Fills the pool in the background. */
  start(): this {
    this.refill();
    return this;
  }

  get available(): number {
    return this.ready.length;
  }

  /**
   * A ready hand for this spec; the next one to finish starting when none is ready; or null (then
   * the caller provisions one itself).
   */
  async take(spec: ProvisionSpec, signal?: AbortSignal): Promise<Hand | null> {
    // Pooled hands have the default policy, no resource limits and no secrets: anything else starts fresh.
    if (spec.kind !== this.spec.kind || spec.resources || spec.secrets || spec.network !== this.spec.network || !sameDomains(spec.allowedDomains, this.spec.allowedDomains)) return null;
    const now = Date.now();
    if (this.target > this.size && now - this.lastMiss > SHRINK_AFTER_MS) {
      this.target -= 1;
      this.lastMiss = now;
    }
    const hand = this.ready.shift();
    if (hand) {
      this.refill();
      return hand;
    }
    this.lastMiss = now;
    this.target = Math.min(this.max, this.target + 1);
    this.refill();
    if (this.starting <= this.waiters.length || this.closed) return null;
    return new Promise<Hand | null>((resolve) => {
      const give = (h: Hand | null) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(h);
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(give);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      };
      this.waiters.push(give);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const give of this.waiters.splice(0)) give(null);
    await Promise.allSettled([...this.ready.splice(0).map((h) => h.close()), ...this.inFlight]);
  }

  private refill(): void {
    while (!this.closed && this.ready.length + this.starting < this.target + this.waiters.length) {
      this.starting += 1;
      const id = `pool-${++this.seq}`;
      const start = this.provisioner.provision(id, this.spec, { signal: new AbortController().signal, background: true }).then(
        async (hand) => {
          this.starting -= 1;
          if (this.closed) return void (await hand.close());
          const waiter = this.waiters.shift();
          if (waiter) {
            waiter(hand);
            this.refill(); // it went to a session at once: the pool is still short of its target
            return;
          }
          this.ready.push(hand);
          // A pooled hand that dies while waiting is dropped, not handed out.
          void hand.lost.then(() => {
            const i = this.ready.indexOf(hand);
            if (i >= 0) this.ready.splice(i, 1);
            this.refill();
          });
        },
        (e: unknown) => {
          this.starting -= 1;
          log.warn('warm pool could not start a hand', errorFields(e));
          // Whoever waited for it starts its own (no retry here: a failing start would spin).
          this.waiters.shift()?.(null);
        },
      );
      this.inFlight.add(start);
      void start.finally(() => this.inFlight.delete(start));
    }
  }
}

function sameDomains(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}
