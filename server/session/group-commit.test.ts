import { describe, expect, it } from 'vitest';
import { GroupCommit, type Settled } from '~/server/session/group-commit';

/** A commit that records its batches and settles them when told to. */
function recorder() {
  const batches: number[][] = [];
  const waiting: Array<() => void> = [];
  const commit = (batch: readonly number[]): Promise<Settled<number>[]> => {
    batches.push([...batch]);
    return new Promise((resolve) =>
      waiting.push(() => resolve(batch.map((n) => (n < 0 ? { ok: false, error: new Error(`bad ${n}`) } : { ok: true, value: n * 10 })))),
    );
  };
  /** Settles the oldest batch committing, once there is one (a macrotask lets the microtask-scheduled batch start). */
  const settleNext = async () => {
    for (let i = 0; waiting.length === 0; i++) {
      if (i > 100) throw new Error('no batch is committing');
      await new Promise((resolve) => setImmediate(resolve));
    }
    waiting.shift()!();
  };
  return { batches, commit, settleNext };
}

describe('group commit', () => {
  it('sends the requests made in one tick as one batch, and those made while it commits as the next', async () => {
    const r = recorder();
    const gc = new GroupCommit(r.commit, { concurrency: 2 });
    const first = [gc.submit(1), gc.submit(2), gc.submit(3)];
    await r.settleNext();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  it('queues requests behind a commit under way and sends them together once it is done', async () => {
    const r = recorder();
    const gc = new GroupCommit(r.commit);
    const a = gc.submit(1);
    await Promise.resolve();
    const later = [gc.submit(2), gc.submit(3), gc.submit(4)];
    await r.settleNext();
    await r.settleNext();
    expect(await a).toBe(10);
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('settles each request with its own outcome, and fails the whole batch when the commit throws', async () => {
    const r = recorder();
    const gc = new GroupCommit(r.commit);
    const pending = Promise.allSettled([gc.submit(1), gc.submit(-2), gc.submit(3)]);
    await r.settleNext();
    const mixed = await pending;
    expect(mixed.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);

    const broken = new GroupCommit<number, number>(() => Promise.reject(new Error('commit failed')));
    const all = await Promise.allSettled([broken.submit(1), broken.submit(2)]);
    expect(all.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'stored'))).toEqual(['commit failed', 'commit failed']);
  });

  it('caps a batch at maxBatch requests', async () => {
    const r = recorder();
    const gc = new GroupCommit(r.commit, { maxBatch: 2 });
    const all = Promise.all([1, 2, 3, 4, 5].map((n) => gc.submit(n)));
    for (let i = 0; i < 3; i++) await r.settleNext();
    expect(await all).toEqual([10, 20, 30, 40, 50]);
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
  });
});
