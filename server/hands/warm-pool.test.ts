import { describe, expect, it } from 'vitest';
import { MemoryHand } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';

const SPEC = { kind: 'sandbox' as const, allowedDomains: [] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    const pool = new WarmPool(p, SPEC, 2, 5).start();
    await sleep(60);
    const burst = await Promise.all(Array.from({ length: 6 }, () => pool.take(SPEC)));
    expect(burst.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(pool.targetSize).toBe(5);
    await sleep(80);
    expect(pool.available).toBe(5);
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
});
