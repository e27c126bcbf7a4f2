import { describe, expect, it } from 'vitest';
import { MemoryHand } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';

const SPEC = { kind: 'sandbox' as const, allowedDomains: [] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` holds; throws after `ms`. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

/** A provisioner whose starts take `ms`, counting them; `fail` makes them fail. */
function slowProvisioner(ms: number, fail = false) {
  const started: string[] = [];
  const p: Provisioner = {
    provision: async (id) => {
      started.push(id);
      await sleep(ms);
      if (fail) throw new Error('no bwrap');
      return new MemoryHand(id);
    },
  };
  return { p, started };
}

describe('warm pool', () => {
  it('grows its target with each miss, up to its maximum, so a burst is met by more ready hands', async () => {
    const { p } = slowProvisioner(30);
    const pool = new WarmPool(p, SPEC, 2, 5, { loopUtilization: () => 0 }).start();
    await until(() => pool.available === 2);
    const burst = await Promise.all(Array.from({ length: 6 }, () => pool.take(SPEC)));
    expect(burst.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(pool.targetSize).toBe(5);
    // Beyond its base the pool starts one hand at a time: it gets there, not all at once.
    await until(() => pool.available === 5);
    await pool.close();
  });

  it('gives a take that misses the next hand to finish starting instead of nothing', async () => {
    const { p, started } = slowProvisioner(50);
    const pool = new WarmPool(p, SPEC, 1, 4).start();
    // Nothing is ready yet, but one hand is starting: the take waits for it.
    const t0 = performance.now();
    const hand = await pool.take(SPEC);
    expect(hand?.id).toBe('pool-1');
    expect(performance.now() - t0).toBeLessThan(200);
    expect(started.length).toBeGreaterThanOrEqual(2); // and the pool goes on filling
    await pool.close();
  });

  it('answers null (the caller starts its own) when starts fail, and does not spin on a failing provisioner', async () => {
    const { p, started } = slowProvisioner(10, true);
    const pool = new WarmPool(p, SPEC, 2, 4).start();
    expect(await pool.take(SPEC)).toBeNull();
    await sleep(100);
    expect(started.length).toBeLessThan(10);
    await pool.close();
  });

  it('never hands a pooled hand to a spec it was not made for, and stops waiters when closed', async () => {
    const { p } = slowProvisioner(200);
    const pool = new WarmPool(p, SPEC, 1, 2).start();
    expect(await pool.take({ kind: 'sandbox', allowedDomains: ['example.com'] })).toBeNull();
    expect(await pool.take({ kind: 'sandbox', allowedDomains: [], resources: { memory_mb: 64 } })).toBeNull();
    // A pooled hand started with no secrets: a session that has some gets a hand of its own.
    expect(await pool.take({ ...SPEC, secrets: () => Promise.resolve([{ name: 'K', value: 'v', hosts: ['*'], header: true, body: false }]) })).toBeNull();
    const waiting = pool.take(SPEC);
    await pool.close();
    expect(await waiting).toBeNull();
  });

  it('stops waiting when the caller gives up (its signal aborts)', async () => {
    const { p } = slowProvisioner(500);
    const pool = new WarmPool(p, SPEC, 1, 1).start();
    const ac = new AbortController();
    const waiting = pool.take(SPEC, ac.signal);
    ac.abort();
    expect(await waiting).toBeNull();
    await pool.close();
  });

  it('closes only once the hands still starting have started and been closed (none outlives it)', async () => {
    const closed: string[] = [];
    const p: Provisioner = {
      provision: async (id) => {
        await sleep(100);
        const hand = new MemoryHand(id);
        const close = hand.close.bind(hand);
        hand.close = async () => {
          await sleep(20);
          closed.push(id);
          return close();
        };
        return hand;
      },
    };
    const pool = new WarmPool(p, SPEC, 2).start();
    await sleep(10);
    await pool.close();
    expect(closed.sort()).toEqual(['pool-1', 'pool-2']);
  });

  it('beyond its base, starts nothing while the event loop is busy, then one hand at a time once it is calm', async () => {
    let live = 0;
    let most = 0;
    const started: string[] = [];
    const p: Provisioner = {
      provision: async (id) => {
        started.push(id);
        most = Math.max(most, ++live);
        await sleep(20);
        live -= 1;
        return new MemoryHand(id);
      },
    };
    let utilization = 0.9;
    const pool = new WarmPool(p, SPEC, 0, 3, { loopUtilization: () => utilization }).start();
    // Three sessions find it empty (each grows the target) and start their own hands.
    for (let i = 0; i < 3; i++) expect(await pool.take(SPEC)).toBeNull();
    expect(pool.targetSize).toBe(3);
    // A busy loop is running turns: the pool waits (it looks again every 250 ms).
    await sleep(600);
    expect(started, 'no speculative start on a busy loop').toEqual([]);
    utilization = 0.1;
    await until(() => pool.available === 3);
    expect(most, 'one speculative start at a time').toBe(1);
    await pool.close();
  });

  it('grows from the measured arrival rate though no take misses, and hands a ready hand out in under 5 ms', async () => {
    // Each start takes a (fake) second; sessions take hands as fast as the pool refills.
    let clock = 1_000_000;
    const p: Provisioner = {
      provision: async (id) => {
        await sleep(2);
        clock += 1_000;
        return new MemoryHand(id);
      },
    };
    const pool = new WarmPool(p, SPEC, 1, 8, { now: () => clock, loopUtilization: () => 0 }).start();
    expect(pool.targetSize).toBe(1);
    const takeMs: number[] = [];
    for (let i = 0; i < 10; i++) {
      await until(() => pool.available > 0);
      const t0 = performance.now();
      const hand = await pool.take(SPEC);
      takeMs.push(performance.now() - t0);
      expect(hand, `take ${i} found a ready hand`).not.toBeNull();
    }
    // One arrival a second, a second a start: two hands ready keep sessions off the start path.
    expect(pool.targetSize).toBeGreaterThanOrEqual(2);
    expect(Math.max(...takeMs)).toBeLessThan(5);
    await pool.close();
  });
});
