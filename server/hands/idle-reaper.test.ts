import { describe, expect, it } from 'vitest';
import { type LiveHand, handsToSuspend } from '~/server/hands/idle-reaper';

const hand = (name: string, lastUsed: number, inFlight = 0): LiveHand => ({ sessionId: `sesn_${name}`, hand: 'sandbox-1', lastUsed, inFlight });
const picked = (r: ReturnType<typeof handsToSuspend>) => r.map((p) => [p.hand.sessionId, p.reason]);

describe('handsToSuspend', () => {
  it('suspends hands idle for the idle time, never a busy one', () => {
    const live = [hand('a', 0), hand('b', 0, 1), hand('c', 900)];
    expect(picked(handsToSuspend(live, 1_000, { idleMs: 500, maxLive: 10 }))).toEqual([['sesn_a', 'idle']]);
  });

  it('past the cap suspends the least recently used idle hands until it holds, sparing the one just started', () => {
    const live = [hand('new', 100), hand('old', 10), hand('busy', 5, 1), hand('mid', 50)];
    expect(picked(handsToSuspend(live, 200, { idleMs: 10_000, maxLive: 2 }, { sessionId: 'sesn_new', hand: 'sandbox-1' }))).toEqual([
      ['sesn_old', 'cap'],
      ['sesn_mid', 'cap'],
    ]);
  });

  it('runs over the cap rather than stop a hand a call is using', () => {
    const live = [hand('a', 1, 1), hand('b', 2, 2)];
    expect(handsToSuspend(live, 10, { idleMs: 10_000, maxLive: 1 })).toEqual([]);
  });
});
