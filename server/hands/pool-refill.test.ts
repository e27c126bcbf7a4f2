import { describe, expect, it } from 'vitest';
import { ARRIVAL_WINDOW_MS, arrivalRate, cpuBusyShare, mayStart, nextStartEstimate, poolTarget, pruneArrivals } from '~/server/hands/pool-refill';

describe('warm pool refill rule', () => {
  it('measures the arrival rate over the last window only, on a fake clock', () => {
    const now = 100_000;
    const arrivals = [now - ARRIVAL_WINDOW_MS - 1, now - ARRIVAL_WINDOW_MS, now - 5_000, now - 2_000, now - 1, now];
    expect(arrivalRate(arrivals, now)).toBeCloseTo(4 / (ARRIVAL_WINDOW_MS / 1000));
    expect(arrivalRate([], now)).toBe(0);
    // A take stamped after `now` (a clock step back) is not counted.
    expect(arrivalRate([now + 10], now)).toBe(0);
    pruneArrivals(arrivals, now);
    expect(arrivals).toEqual([now - 5_000, now - 2_000, now - 1, now]);
  });

  it('keeps the base size when nothing arrives and twice what arrivals consume during a start, never past the cap', () => {
    expect(poolTarget({ ratePerSec: 0, startMs: 900, base: 2, max: 16 })).toBe(2);
    // 3 sessions a second, 0.9 s a start: 2.7 consumed during one start, 5.4 with headroom.
    expect(poolTarget({ ratePerSec: 3, startMs: 900, base: 2, max: 16 })).toBe(6);
    expect(poolTarget({ ratePerSec: 50, startMs: 900, base: 2, max: 16 })).toBe(16);
    // A cap below the base is the base (PADDOCK_WARM_POOL is the floor).
    expect(poolTarget({ ratePerSec: 50, startMs: 900, base: 4, max: 0 })).toBe(4);
    // Cheap starts need few hands even at a high rate.
    expect(poolTarget({ ratePerSec: 10, startMs: 50, base: 0, max: 16 })).toBe(1);
  });

  it('starts at once up to the base or for a waiting session, but speculatively only one at a time on a calm loop', () => {
    const s = { ready: 0, starting: 0, waiters: 0, base: 2, target: 6, loopUtilization: 0.9 };
    expect(mayStart(s), 'below the base, even on a busy loop').toBe(true);
    expect(mayStart({ ...s, ready: 1, starting: 1, waiters: 1 }), 'a session waits').toBe(true);
    expect(mayStart({ ...s, ready: 2 }), 'beyond the base on a busy loop').toBe(false);
    expect(mayStart({ ...s, ready: 2, loopUtilization: 0.1 }), 'beyond the base on a calm loop').toBe(true);
    expect(mayStart({ ...s, ready: 2, starting: 1, loopUtilization: 0.1 }), 'one speculative start at a time').toBe(false);
    expect(mayStart({ ...s, ready: 6, loopUtilization: 0 }), 'at the target').toBe(false);
  });

  it('reads how busy the machine’s CPUs were between two readings, all cores together', () => {
    const t = (user: number, idle: number) => ({ user, nice: 0, sys: 0, idle, irq: 0 });
    // Two cores over one second: one fully busy, one idle.
    expect(cpuBusyShare([t(0, 0), t(0, 0)], [t(1_000, 0), t(0, 1_000)])).toBeCloseTo(0.5);
    expect(cpuBusyShare([t(0, 0), t(0, 0)], [t(900, 100), t(800, 200)])).toBeCloseTo(0.85);
    // No time passed (or no reading): calm, never NaN.
    expect(cpuBusyShare([t(5, 5)], [t(5, 5)])).toBe(0);
    expect(cpuBusyShare([], [])).toBe(0);
    // A busy machine keeps a speculative start waiting, like a busy loop.
    const busy = cpuBusyShare([t(0, 0)], [t(950, 50)]);
    expect(mayStart({ ready: 2, starting: 0, waiters: 0, base: 2, target: 6, loopUtilization: busy })).toBe(false);
  });

  it('moves its start-time estimate toward each measured start', () => {
    let est = 1_000;
    for (let i = 0; i < 20; i++) est = nextStartEstimate(est, 100);
    expect(est).toBeGreaterThan(100);
    expect(est).toBeLessThan(101);
    expect(nextStartEstimate(1_000, 2_000)).toBe(1_300);
  });
});
