import { describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { ProvisionOptions, Provisioner } from '~/server/hands/provisioner';
import { limitStarts } from '~/server/hands/start-limit';

/** A provisioner whose starts finish when the test says: records what started, and when. */
function gated() {
  const started: string[] = [];
  const pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  let inFlight = 0;
  let peak = 0;
  const inner: Provisioner = {
    provision: (id) =>
      new Promise<Hand>((resolve, reject) => {
        started.push(id);
        peak = Math.max(peak, ++inFlight);
        pending.set(id, {
          resolve: () => {
            inFlight--;
            resolve({ id } as unknown as Hand);
          },
          reject: (e) => {
            inFlight--;
            reject(e);
          },
        });
      }),
  };
  return { inner, started, finish: (id: string) => pending.get(id)!.resolve(), fail: (id: string) => pending.get(id)!.reject(new Error(`${id} failed`)), peak: () => peak };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const opts = (extra: Partial<ProvisionOptions> = {}): ProvisionOptions => ({ signal: new AbortController().signal, ...extra });
const spec = { kind: 'sandbox' } as const;

describe('limitStarts', () => {
  it('starts at most N hands at once and the rest in arrival order', async () => {
    const g = gated();
    const p = limitStarts(g.inner, 2);
    const all = ['a', 'b', 'c', 'd'].map((id) => p.provision(id, spec, opts()));
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    g.finish('b');
    await tick();
    expect(g.started).toEqual(['a', 'b', 'c']);
    g.finish('a');
    g.finish('c');
    await tick();
    g.finish('d');
    await Promise.all(all);
    expect(g.started).toEqual(['a', 'b', 'c', 'd']);
    expect(g.peak()).toBe(2);
  });

  it("lets a session's start go before warm-pool refills that were waiting first", async () => {
    const g = gated();
    const p = limitStarts(g.inner, 1);
    const first = p.provision('pool-1', spec, opts({ background: true }));
    const pool2 = p.provision('pool-2', spec, opts({ background: true }));
    const session = p.provision('session', spec, opts());
    await tick();
    g.finish('pool-1');
    await first;
    await tick();
    expect(g.started).toEqual(['pool-1', 'session']);
    g.finish('session');
    await session;
    await tick();
    g.finish('pool-2');
    await pool2;
    expect(g.started).toEqual(['pool-1', 'session', 'pool-2']);
  });

  it('frees the slot of a failed start, and a caller that gives up while waiting never starts', async () => {
    const g = gated();
    const p = limitStarts(g.inner, 1);
    const failing = p.provision('x', spec, opts());
    const abort = new AbortController();
    const progress: string[] = [];
    const givenUp = p.provision('gone', spec, { signal: abort.signal, onProgress: (_phase, detail) => progress.push(detail ?? '') });
    const next = p.provision('y', spec, opts());
    await tick();
    expect(progress[0]).toMatch(/waiting for a turn to start/);
    abort.abort(new Error('session closed'));
    await expect(givenUp).rejects.toThrow('session closed');
    g.fail('x');
    await expect(failing).rejects.toThrow('x failed');
    await tick();
    expect(g.started).toEqual(['x', 'y']);
    g.finish('y');
    await expect(next).resolves.toMatchObject({ id: 'y' });
  });
});
