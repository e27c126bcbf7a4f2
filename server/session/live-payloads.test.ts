import { describe, expect, it } from 'vitest';
import type { LiveDelta } from '~/lib/events';
import { LIVE_PAYLOAD_MAX_BYTES, livePayload, livePieces, mergeDeltas, parseLivePayload } from '~/server/session/live-payloads';

const text = (t: string, over: Partial<Extract<LiveDelta, { kind: 'text' }>> = {}): LiveDelta => ({
  kind: 'text',
  session_id: 'sesn_a',
  model_request_start_id: 'sevt_1',
  index: 0,
  text: t,
  ...over,
});

describe('live payloads', () => {
  it('keeps a small delta whole and round-trips it', () => {
    const d = text('hello');
    expect(livePieces(d)).toEqual([d]);
    expect(parseLivePayload(livePayload(1, d))).toEqual(d);
  });

  it('cuts escape-heavy text into pieces that each fit one NOTIFY and join back to it', () => {
    // Control characters are escaped to six bytes each in JSON: the worst case for the limit.
    const t = '\u0001'.repeat(9_000) + '🙂'.repeat(500);
    const pieces = livePieces(text(t));
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) expect(Buffer.byteLength(livePayload(Number.MAX_SAFE_INTEGER, p))).toBeLessThanOrEqual(LIVE_PAYLOAD_MAX_BYTES);
    expect(pieces.map((p) => (p.kind === 'text' ? p.text : '')).join('')).toBe(t);
  });

  it('merges tokens of one block, and nothing else', () => {
    expect(mergeDeltas(text('a'), text('b'))).toEqual(text('ab'));
    expect(mergeDeltas(text('a'), text('b', { index: 1 }))).toBeNull();
    expect(mergeDeltas(text('a'), text('b', { session_id: 'sesn_b' }))).toBeNull();
    expect(mergeDeltas(text('a'), { ...text('b'), kind: 'thinking' } as LiveDelta)).toBeNull();
    const hand: LiveDelta = { kind: 'hand', session_id: 'sesn_a', hand: 'sandbox-1', hand_kind: 'sandbox', phase: 'ready' };
    expect(mergeDeltas(hand, hand)).toBeNull();
    // A merge never grows a delta past one piece.
    expect(mergeDeltas(text('x'.repeat(900)), text('y'.repeat(200)))).toBeNull();
  });

  it('ignores a payload that is not a delta', () => {
    expect(parseLivePayload('not json')).toBeNull();
    expect(parseLivePayload(JSON.stringify({ n: 1, d: { kind: 'nope', session_id: 's' } }))).toBeNull();
    expect(parseLivePayload(JSON.stringify({ n: 1 }))).toBeNull();
  });
});
