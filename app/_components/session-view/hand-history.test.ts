import { describe, expect, it } from 'vitest';
import { groupHands } from '~/app/_components/session-view/hand-history';
import type { HandRecord } from '~/lib/hand-log';

function hand(id: string, status: HandRecord['status'], extra: Partial<HandRecord> = {}): HandRecord {
  return { id, kind: 'sandbox', status, since: '2026-01-01T00:00:00.000Z', seq: 1, ...extra };
}

describe('groupHands', () => {
  it('lists ready hands as live, suspended ones included, in provisioning order', () => {
    const g = groupHands([hand('sandbox-1', 'ready'), hand('sandbox-2', 'lost'), hand('sandbox-3', 'ready', { suspended: 'idle' })]);
    expect(g.live.map((h) => h.id)).toEqual(['sandbox-1', 'sandbox-3']);
  });

  it('folds lost and released hands into the history, newest first', () => {
    const g = groupHands([hand('sandbox-1', 'released'), hand('sandbox-2', 'lost'), hand('sandbox-3', 'ready')]);
    expect(g.history.map((h) => h.id)).toEqual(['sandbox-2', 'sandbox-1']);
  });

  it('summarizes the history with a count per way the hands ended', () => {
    expect(groupHands([hand('a', 'released'), hand('b', 'lost'), hand('c', 'ready')]).summary).toBe('2 earlier hands (1 lost, 1 released)');
    expect(groupHands([hand('a', 'lost'), hand('b', 'lost'), hand('c', 'lost')]).summary).toBe('3 earlier hands (3 lost)');
  });

  it('says "hand" for a single ended hand', () => {
    expect(groupHands([hand('a', 'released')]).summary).toBe('1 earlier hand (1 released)');
  });

  it('has no summary when every hand is live', () => {
    const g = groupHands([hand('a', 'ready')]);
    expect(g.history).toEqual([]);
    expect(g.summary).toBe('');
  });
});
