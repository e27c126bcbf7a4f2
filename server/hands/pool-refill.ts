/**
 * The warm pool's refill rule, pure so it is tested on a fake clock (warm-pool.ts applies it).
 *
 * Demand is measured, not guessed: the pool keeps the times of recent takes and the measured
 * duration of its recent starts. By Little's law, while sessions arrive at λ per second and a
 * start takes T seconds, λ·T hands are consumed during one refill: that many (doubled, since
 * arrivals come in bursts) must be ready for a session never to wait on a start. The target never
 * drops below the pool's base size nor rises above its cap (PADDOCK_POOL_MAX).
 */

/** The window over which arrivals are counted. */
export const ARRIVAL_WINDOW_MS = 10_000;
/** Arrivals are bursty: keep twice the hands a steady stream would consume during one start. */
export const BURST_HEADROOM = 2;
/**
 * Calm: the event loop and the machine's CPUs were busy less than this share of the last second
 * (warm-pool.ts measures the busier of the two): a speculative start then takes no CPU a running
 * turn is waiting for.
 */
export const CALM_LOOP_UTILIZATION = 0.5;

/** One CPU's cumulative times in ms, as `os.cpus()[i].times` gives them. */
export interface CpuTimes {
  user: number;
  nice: number;
  sys: number;
  idle: number;
  irq: number;
}

/**
 * The share of the machine's CPU time that was busy between two readings of every CPU's times (0–1).
 * A turn's CPU is mostly its hand's processes, not the server's event loop: a speculative start
 * waits for both to be calm.
 */
export function cpuBusyShare(prev: readonly CpuTimes[], cur: readonly CpuTimes[]): number {
  let busy = 0;
  let total = 0;
  for (let i = 0; i < Math.min(prev.length, cur.length); i++) {
    const a = prev[i]!;
    const b = cur[i]!;
    const idle = b.idle - a.idle;
    const work = b.user - a.user + (b.nice - a.nice) + (b.sys - a.sys) + (b.irq - a.irq);
    busy += Math.max(0, work);
    total += Math.max(0, work) + Math.max(0, idle);
  }
  return total > 0 ? busy / total : 0;
}

/** Takes per second over the last `windowMs` before `now`. */
export function arrivalRate(arrivals: readonly number[], now: number, windowMs = ARRIVAL_WINDOW_MS): number {
  const since = now - windowMs;
  return arrivals.filter((t) => t > since && t <= now).length / (windowMs / 1000);
}

/** Drops the arrivals that left the window (the list stays as short as the recent demand). */
export function pruneArrivals(arrivals: number[], now: number, windowMs = ARRIVAL_WINDOW_MS): void {
  const since = now - windowMs;
  let drop = 0;
  while (drop < arrivals.length && arrivals[drop]! <= since) drop += 1;
  arrivals.splice(0, drop);
}

/** How many hands to keep ready for `ratePerSec` arrivals when a start takes `startMs`. */
export function poolTarget(o: { ratePerSec: number; startMs: number; base: number; max: number }): number {
  const max = Math.max(o.base, o.max);
  const wanted = Math.ceil(o.ratePerSec * (o.startMs / 1000) * BURST_HEADROOM);
  return Math.min(max, Math.max(o.base, wanted));
}

/** The start-duration estimate after one more measured start (an exponential moving average). */
export function nextStartEstimate(previousMs: number, measuredMs: number, alpha = 0.3): number {
  return previousMs + alpha * (measuredMs - previousMs);
}

/**
 * Whether the pool may start a hand now. Up to its base size, or for a session already waiting,
 * at once (as before). Beyond that it is speculative: one start at a time, and only while the
 * event loop is calm, so a refill never takes CPU from a running turn.
 */
export function mayStart(o: { ready: number; starting: number; waiters: number; base: number; target: number; loopUtilization: number }): boolean {
  const have = o.ready + o.starting;
  if (have < o.base + o.waiters) return true;
  if (have >= o.target + o.waiters) return false;
  return o.starting === 0 && o.loopUtilization < CALM_LOOP_UTILIZATION;
}
