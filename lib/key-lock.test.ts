import { describe, expect, it } from 'vitest';
import { KeyLock } from '~/lib/key-lock';
import { sleep } from '~/lib/sleep';

describe('KeyLock', () => {
  it('runs work under one key one at a time, in order, and other keys beside it', async () => {
    const lock = new KeyLock();
    const log: string[] = [];
    const job = (key: string, name: string, ms: number) =>
      lock.run(key, async () => {
        log.push(`${name}+`);
        await sleep(ms);
        log.push(`${name}-`);
      });
    await Promise.all([job('a', 'a1', 20), job('a', 'a2', 1), job('b', 'b1', 5)]);
    expect(log.indexOf('a1-')).toBeLessThan(log.indexOf('a2+'));
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
    expect(lock.size).toBe(0);
  });

  it('lets the next one run after a failure', async () => {
    const lock = new KeyLock();
    await expect(lock.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lock.run('k', () => Promise.resolve(7))).toBe(7);
    expect(lock.size).toBe(0);
  });
});
