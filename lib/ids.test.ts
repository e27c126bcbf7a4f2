import { describe, expect, it } from 'vitest';
import { ID_PATTERN, newId } from '~/lib/ids';

describe('newId', () => {
  it('makes prefixed ULIDs that are unique and sort in the order they were made, across many pool refills', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('sevt'));
    for (const id of ids) expect(id).toMatch(ID_PATTERN.event);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('draws the random part evenly over the 32 characters', () => {
    // Ids made a millisecond apart each get a fresh random part (within one, ulid increments).
    const counts = new Map<string, number>();
    const start = Date.now();
    let made = 0;
    while (made < 400 && Date.now() - start < 5_000) {
      const id = newId('sesn');
      for (const c of id.slice(5 + 10 + 1)) counts.set(c, (counts.get(c) ?? 0) + 1);
      made++;
      const t = Date.now();
      while (Date.now() === t) {
        // the next millisecond
      }
    }
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    expect(counts.size).toBe(32);
    for (const n of counts.values()) expect(n / total).toBeGreaterThan(1 / 32 / 2);
  });
});
