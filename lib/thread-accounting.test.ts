import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { accountThread } from '~/lib/thread-accounting';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
let seq = 0;
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ev = (type: string, s: number, extra: Record<string, unknown> = {}) => ({ type, id: `sevt_${++seq}`, seq, session_id: 'sesn_x', processed_at: at(s), ...extra }) as unknown as StoredEvent;
const usage = (input: number) => ({ model_usage: { input_tokens: input, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
const child = { session_thread_id: 'sthr_c' };

const log = [
  ev('session.status_running', 2),
  ev('span.model_request_end', 3, usage(10)),
  ev('session.thread_created', 3, { ...child, agent_name: 'w' }),
  ev('session.thread_status_running', 3, { ...child, agent_name: 'w' }),
  ev('span.model_request_end', 5, { ...child, ...usage(100) }),
  ev('session.thread_status_idle', 6, { ...child, agent_name: 'w' }),
  ev('span.model_request_end', 7, usage(20)),
  ev('session.status_idle', 8),
];

describe('a thread’s stats and usage', () => {
  it('counts only the thread’s own requests and the time between its running and idle statuses', () => {
    const primary = accountThread(log, { id: null, created_at: at(0), archived_at: null }, T0 + 10_000);
    expect(primary.usage).toMatchObject({ input_tokens: 30, output_tokens: 2, active_seconds: 6 });
    expect(primary.stats).toEqual({ active_seconds: 6, duration_seconds: 10, startup_seconds: 2 });
    const c = accountThread(log, { id: 'sthr_c', created_at: at(3), archived_at: null }, T0 + 10_000);
    expect(c.usage).toMatchObject({ input_tokens: 100, active_seconds: 3 });
    expect(c.stats).toEqual({ active_seconds: 3, duration_seconds: 7, startup_seconds: 0 });
  });

  it('has no stats before the first status and no usage before the first idle; an archived thread’s duration stops at its archive', () => {
    expect(accountThread([], { id: null, created_at: at(0), archived_at: null }, T0 + 1000)).toEqual({ stats: null, usage: null });
    const running = accountThread(log.slice(0, 5), { id: 'sthr_c', created_at: at(3), archived_at: null }, T0 + 9000);
    expect(running).toEqual({ stats: { active_seconds: 6, duration_seconds: 6, startup_seconds: 0 }, usage: null });
    const archived = accountThread(log, { id: 'sthr_c', created_at: at(3), archived_at: at(9) }, T0 + 60_000);
    expect(archived.stats?.duration_seconds).toBe(6);
  });
});
