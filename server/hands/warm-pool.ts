import 'server-only';
import os from 'node:os';
import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import type { Hand } from '~/lib/hand';
import { arrivalRate, cpuBusyShare, mayStart, nextStartEstimate, poolTarget, pruneArrivals } from '~/server/hands/pool-refill';
import type { ProvisionSpec, Provisioner, SandboxSpec } from '~/server/hands/provisioner';
import { errorFields, logger } from '~/server/log';

const log = logger('hands.pool');

/** How long without a miss before the pool shrinks back by one toward its base size. */
const SHRINK_AFTER_MS = 60_000;
/** A speculative start put off because the loop was busy is looked at again this much later. */
const CALM_RETRY_MS = 250;
/** What a sandbox start is taken to cost until the pool has measured one. */
const FIRST_START_ESTIMATE_MS = 1_000;

export interface WarmPoolOptions {
  /** The clock (a test's fake one). */
  now?: () => number;
  /**
   * How busy the last second was (0–1); default: measured, the busier of this event loop
   * (perf_hooks) and the machine's CPUs (os.cpus(), where the hands' processes run).
   */
  loopUtilization?: () => number;
}

/**
 * Pre-started sandbox hands with the default policy, so a session's first tool call waits
 * milliseconds instead of a process start. A pooled hand is fresh (its own new workspace) and
 * is handed out once: it is never returned to the pool or shared across sessions.
 *
 * The pool follows demand: its target is what the measured arrival rate consumes during a measured
 * start (pool-refill.ts), and every miss (a take that found it empty) grows it by one; both up to
 * `max` (PADDOCK_POOL_MAX), and a minute without a miss shrinks the miss part back toward `size`.
 * Up to `size` it refills at once; beyond, one start at a time and only while the event loop is
 * calm, so it never takes CPU from a running turn. A take that misses while hands are starting
 * waits for the next of them rather than starting one more from scratch. A ready hand is handed
 * out synchronously (already connected): taking one costs no start.
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
  /** When recent takes came (within the arrival window). */
  private readonly arrivals: number[] = [];
  private startEstimateMs = FIRST_START_ESTIMATE_MS;
  private readonly now: () => number;
  private readonly loopUtilization: () => number;
  private sampler: NodeJS.Timeout | null = null;
  private lastUtilization = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly provisioner: Provisioner,
    private readonly spec: SandboxSpec,
    private readonly size: number,
    private readonly max: number = size,
    opts: WarmPoolOptions = {},
  ) {
    this.target = size;
    this.now = opts.now ?? Date.now;
    this.loopUtilization = opts.loopUtilization ?? (() => this.measuredUtilization());
  }

  /** How many hands the pool keeps ready now (between `size` and `max`): the larger of demand's and the misses'. */
  get targetSize(): number {
    const now = this.now();
    pruneArrivals(this.arrivals, now);
    const measured = poolTarget({ ratePerSec: arrivalRate(this.arrivals, now), startMs: this.startEstimateMs, base: this.size, max: this.max });
    return Math.max(this.target, measured);
  }

  /** Fills the pool in the background. */
  start(): this {
    this.refill();
    return this;
  }

  /** How busy the last whole second was (the loop or the machine's CPUs), sampled once a second while the pool is open. */
  private measuredUtilization(): number {
    if (!this.sampler && !this.closed) {
      let prev: EventLoopUtilization = performance.eventLoopUtilization();
      let prevCpus = os.cpus().map((c) => c.times);
      this.sampler = setInterval(() => {
        const cur = performance.eventLoopUtilization();
        const cpus = os.cpus().map((c) => c.times);
        this.lastUtilization = Math.max(performance.eventLoopUtilization(cur, prev).utilization, cpuBusyShare(prevCpus, cpus));
        prev = cur;
        prevCpus = cpus;
      }, 1_000);
      this.sampler.unref();
    }
    return this.lastUtilization;
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
    const now = this.now();
    this.arrivals.push(now);
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
    if (this.retry) clearTimeout(this.retry);
    if (this.sampler) clearInterval(this.sampler);
    for (const give of this.waiters.splice(0)) give(null);
    await Promise.allSettled([...this.ready.splice(0).map((h) => h.close()), ...this.inFlight]);
  }

  private refill(): void {
    if (this.closed) return;
    const target = this.targetSize;
    while (!this.closed && mayStart({ ready: this.ready.length, starting: this.starting, waiters: this.waiters.length, base: this.size, target, loopUtilization: this.loopUtilization() })) {
      this.startOne();
    }
    // Short of the target with nothing starting (the loop was busy): look again later. A start in
    // flight calls refill when it ends; a failed one does not, so a failing provisioner cannot spin.
    if (!this.closed && this.starting === 0 && this.ready.length < target + this.waiters.length && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = null;
        this.refill();
      }, CALM_RETRY_MS);
      this.retry.unref();
    }
  }

  private startOne(): void {
    this.starting += 1;
    const id = `pool-${++this.seq}`;
    const t0 = this.now();
    const start = this.provisioner.provision(id, this.spec, { signal: new AbortController().signal, background: true }).then(
      async (hand) => {
        this.starting -= 1;
        this.startEstimateMs = nextStartEstimate(this.startEstimateMs, this.now() - t0);
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
        this.refill(); // speculative starts go one at a time: the next may follow
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

function sameDomains(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}
