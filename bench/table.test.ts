import { describe, expect, it } from 'vitest';
import { type Row, withBefore } from '~/bench/table';

const row = (benchmark: string, result: string): Row => ({ benchmark, result, goal: '—', ok: null });

describe('bench tables', () => {
  it('shows each row beside what an earlier run measured, and says so when it had no such row', () => {
    const rows = withBefore([row('cold start p50', '352 ms'), row('crowd: finished', '200 / 200')], { 'cold start p50': '546 ms', 'gone row': '1 ms' });
    expect(rows.map((r) => [r.benchmark, r.before, r.result])).toEqual([
      ['cold start p50', '546 ms', '352 ms'],
      ['crowd: finished', '—', '200 / 200'],
    ]);
  });

  it('adds no before column without a saved run', () => {
    expect(withBefore([row('a', '1 ms')], null)[0]!.before).toBeNull();
  });
});
