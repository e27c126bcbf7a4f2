import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';

describe('page cursors', () => {
  it('round-trips a position under its scope', () => {
    const c = encodeCursor('sessions:updated_at', ['2026-12-03T00:00:00.000Z', 'sesn_01', 'next']);
    expect(decodeCursor(c, 'sessions:updated_at', [z.string(), z.string(), z.enum(['next', 'prev'])])).toEqual(['2026-12-03T00:00:00.000Z', 'sesn_01', 'next']);
  });

  it("refuses another list's cursor, so one list's position is never read as another's", () => {
    const c = encodeCursor('agents', ['2026-12-03T00:00:00.000Z', 'agent_01']);
    expect(() => decodeCursor(c, 'environments', [z.string(), z.string()])).toThrow(InvalidInputError);
    expect(() => decodeCursor(c, 'agents', [z.string(), z.string()])).not.toThrow();
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['the wrong shape', encodeCursor('events', ['seven'])],
    ['too many values', encodeCursor('events', [1, 2])],
    ['plain JSON of another kind', Buffer.from('{"s":1}').toString('base64url')],
  ])('refuses %s with one message naming the parameter', (_what, page) => {
    expect(() => decodeCursor(page, 'events', [z.number().int()])).toThrow('page: not a cursor returned by this list');
  });
});
