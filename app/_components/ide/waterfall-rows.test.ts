import { describe, expect, it } from 'vitest';
import { type EventType, type NewEventOf, type StoredEvent, type StoredEventOf, parseStoredEvent } from '~/lib/events';
import { axisTicks, formatMs, formatTick, rowDuration, slowestRows, waterfallOrigin, waterfallRows } from '~/app/_components/ide/waterfall-rows';

const T0 = Date.UTC(2025, 0, 1);
const USAGE = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 50 };

/** A log whose events land at explicit times (ms after T0), validated like the store would. */
class Log {
  readonly events: StoredEvent[] = [];

  add<T extends EventType>(atMs: number, e: NewEventOf<T>): StoredEventOf<T> {
    const seq = this.events.length + 1;
    const s = { ...e, id: `sevt_${String(seq).padStart(26, '0')}`, session_id: 'sesn_test', seq, processed_at: new Date(T0 + atMs).toISOString() };
    parseStoredEvent(s);
    this.events.push(s);
    return s;
  }
  start(atMs: number, model = 'claude-test') {
    return this.add(atMs, { type: 'span.model_request_start', model });
  }
  end(atMs: number, start: StoredEvent, extra: Partial<NewEventOf<'span.model_request_end'>> = {}) {
    return this.add(atMs, { type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: USAGE, ...extra });
  }
  use(atMs: number, name = 'bash', hand?: string) {
    return this.add(atMs, { type: 'agent.tool_use', name, input: {}, model_tool_use_id: `toolu_${atMs}`, ...(hand ? { hand } : {}) });
  }
  result(atMs: number, use: StoredEvent, opts: { by?: 'agent' | 'user'; isError?: boolean; hand?: string } = {}) {
    if (opts.by === 'user') return this.add(atMs, { type: 'user.tool_result', tool_use_id: use.id, is_error: opts.isError ?? false });
    return this.add(atMs, { type: 'agent.tool_result', tool_use_id: use.id, is_error: opts.isError ?? false, ...(opts.hand ? { hand: opts.hand } : {}) });
  }
}

describe('waterfallRows', () => {
  it('returns no rows for an empty log', () => {
    expect(waterfallRows([])).toEqual([]);
    expect(waterfallOrigin([])).toBeNull();
  });

  it('measures every row from the first event of the log', () => {
    const log = new Log();
    log.add(0, { type: 'user.message', content: [{ type: 'text', text: 'hi' }] });
    const s = log.start(250);
    log.end(1250, s, { duration_ms: 1000 });
    const [row] = waterfallRows(log.events);
    expect(waterfallOrigin(log.events)).toBe(T0);
    expect(row).toMatchObject({ kind: 'model', start: 250, end: 1250 });
  });

  it('pairs a model request start with its end by model_request_start_id and keeps ttft, usage and stop reason', () => {
    const log = new Log();
    const a = log.start(0, 'claude-a');
    const b = log.start(100, 'claude-b');
    log.end(900, b, { ttft_ms: 300, duration_ms: 800, model_stop_reason: 'tool_use' });
    log.end(1000, a, { ttft_ms: 50, duration_ms: 1000, is_error: true });
    const rows = waterfallRows(log.events);
    expect(rows).toEqual([
      expect.objectContaining({ kind: 'model', id: a.id, model: 'claude-a', start: 0, end: 1000, ttftMs: 50, isError: true }),
      expect.objectContaining({ kind: 'model', id: b.id, model: 'claude-b', start: 100, end: 900, ttftMs: 300, usage: USAGE, stopReason: 'tool_use', isError: false }),
    ]);
  });

  it('prefers the measured duration over the end event timestamp, which also counts storing the turn', () => {
    const log = new Log();
    const s = log.start(0);
    log.end(1500, s, { duration_ms: 1200 });
    expect(waterfallRows(log.events)[0]?.end).toBe(1200);
  });

  it('falls back to the end event timestamp when no duration was measured', () => {
    const log = new Log();
    const s = log.start(0);
    log.end(700, s);
    expect(waterfallRows(log.events)[0]).toMatchObject({ end: 700, ttftMs: null });
  });

  it('leaves a model request without an end open', () => {
    const log = new Log();
    log.start(10);
    expect(waterfallRows(log.events)[0]).toMatchObject({ kind: 'model', start: 0, end: null, usage: null });
  });

  it('pairs a tool use with the agent or user result whose tool_use_id is the use event id', () => {
    const log = new Log();
    const bash = log.use(0, 'bash', 'sandbox-1');
    const read = log.use(0, 'read', 'sandbox-1');
    log.result(400, read);
    log.result(2000, bash, { by: 'user', isError: true });
    const rows = waterfallRows(log.events);
    expect(rows).toEqual([
      expect.objectContaining({ kind: 'tool', id: bash.id, name: 'bash', hand: 'sandbox-1', start: 0, end: 2000, isError: true }),
      expect.objectContaining({ kind: 'tool', id: read.id, name: 'read', start: 0, end: 400, isError: false }),
    ]);
  });

  it('takes the hand from the result when the use named none', () => {
    const log = new Log();
    const use = log.use(0, 'bash');
    log.result(10, use, { hand: 'browser-1' });
    expect(waterfallRows(log.events)[0]).toMatchObject({ hand: 'browser-1' });
  });

  it('keeps the first result when a tool result is seen twice', () => {
    const log = new Log();
    const use = log.use(0);
    log.result(100, use);
    log.result(900, use, { isError: true });
    expect(waterfallRows(log.events)[0]).toMatchObject({ end: 100, isError: false });
  });

  it('ignores results and ends whose opening event is not in the log', () => {
    const log = new Log();
    log.add(0, { type: 'agent.tool_result', tool_use_id: 'sevt_missing', is_error: false });
    log.add(5, { type: 'span.model_request_end', model_request_start_id: 'sevt_missing', is_error: false, model_usage: USAGE });
    expect(waterfallRows(log.events)).toEqual([]);
  });

  it('shows an MCP tool call labelled with its server', () => {
    const log = new Log();
    const use = log.add(0, { type: 'agent.mcp_tool_use', name: 'search', mcp_server_name: 'docs', input: {}, model_tool_use_id: 'toolu_1' });
    log.add(300, { type: 'agent.mcp_tool_result', mcp_tool_use_id: use.id, is_error: false });
    expect(waterfallRows(log.events)[0]).toMatchObject({ kind: 'tool', name: 'search', hand: 'docs', end: 300 });
  });

  it('orders rows by when their span started', () => {
    const log = new Log();
    const s = log.start(0);
    log.end(100, s, { duration_ms: 100 });
    const u = log.use(100);
    const s2 = log.start(200);
    log.result(150, u);
    log.end(400, s2, { duration_ms: 200 });
    expect(waterfallRows(log.events).map((r) => r.kind)).toEqual(['model', 'tool', 'model']);
  });
});

describe('rowDuration', () => {
  it('measures an open span until now', () => {
    const log = new Log();
    log.start(0);
    const [row] = waterfallRows(log.events);
    expect(rowDuration(row!, 4200)).toBe(4200);
  });
});

describe('slowestRows', () => {
  function rowsWithDurations(durations: number[]) {
    const log = new Log();
    for (const d of durations) {
      const u = log.use(0);
      log.result(d, u);
    }
    return waterfallRows(log.events);
  }

  it('highlights nothing when there are fewer than ten finished rows', () => {
    expect(slowestRows(rowsWithDurations([1, 2, 3, 400])).size).toBe(0);
  });

  it('highlights the slowest tenth of finished rows', () => {
    const rows = rowsWithDurations([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 5000]);
    const slow = slowestRows(rows);
    expect([...slow].map((id) => rows.find((r) => r.id === id)?.end)).toEqual([190, 5000]);
  });

  it('highlights every row tied with the cut-off', () => {
    const rows = rowsWithDurations([1, 1, 1, 1, 1, 1, 1, 1, 9, 9, 9]);
    expect(slowestRows(rows).size).toBe(3);
  });

  it('leaves open spans out', () => {
    const log = new Log();
    for (let i = 0; i < 10; i++) {
      const u = log.use(0);
      log.result(10 + i, u);
    }
    const open = log.use(0);
    const slow = slowestRows(waterfallRows(log.events));
    expect(slow.has(open.id)).toBe(false);
    expect(slow.size).toBe(1);
  });
});

describe('axisTicks', () => {
  it('steps in 1, 2 or 5 times a power of ten below a second, starting at zero and covering the span', () => {
    expect(axisTicks(1000, 5)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(axisTicks(9000, 4)).toEqual([0, 5000]);
    expect(axisTicks(12_345, 6)).toEqual([0, 5000, 10_000]);
    expect(axisTicks(45, 5)).toEqual([0, 10, 20, 30, 40]);
  });

  it('steps in clock units above a second: 15 s, 30 s, whole minutes, whole hours', () => {
    expect(axisTicks(80_000, 6)).toEqual([0, 15_000, 30_000, 45_000, 60_000, 75_000]);
    expect(axisTicks(35 * 60_000, 6)).toEqual([0, 600_000, 1_200_000, 1_800_000]);
    expect(axisTicks(30 * 3_600_000, 6)).toEqual([0, 5, 10, 15, 20, 25, 30].map((h) => h * 3_600_000));
  });

  it('gives a single zero tick for an empty span', () => {
    expect(axisTicks(0)).toEqual([0]);
  });
});

describe('formatting', () => {
  it('formats durations as ms, seconds, then minutes', () => {
    expect(formatMs(840.4)).toBe('840 ms');
    expect(formatMs(2400)).toBe('2.40 s');
    expect(formatMs(12_340)).toBe('12.3 s');
    expect(formatMs(185_000)).toBe('3m 05s');
  });

  it('formats axis ticks without needless decimals', () => {
    expect(formatTick(0)).toBe('0');
    expect(formatTick(500)).toBe('500 ms');
    expect(formatTick(1500)).toBe('1.5 s');
    expect(formatTick(120_000)).toBe('2m');
    expect(formatTick(150_000)).toBe('2m 30s');
  });
});
