import { describe, expect, it } from 'vitest';
import { ToolError } from '~/lib/hand';
import { sessionEvents } from '~/server/harness/core/session-events';
import { Log } from '~/server/harness/testing/log-builder';

function log(): Log {
  const l = new Log();
  l.user('Deploy to eu-west-3, please.');
  for (let i = 1; i <= 30; i++) {
    const start = l.spanStart();
    const call = l.toolUse(`toolu_${i}`, 'bash', { command: `step ${i}` });
    l.spanEnd(start);
    l.result(call, `output of step ${i}${i === 7 ? ': ERROR disk full' : ''}`);
  }
  l.turn(() => l.say('Done.'));
  return l;
}

describe('session_events (the recall tool)', () => {
  it('reads a seq range, one event per line, without ids or times', () => {
    const out = sessionEvents({ from: 1, to: 5 }, log().events);
    expect(out.split('\n')[0]).toBe('5 events match in 1–5 (the log has 124).');
    expect(out).toContain('#1 user.message Deploy to eu-west-3, please.');
    expect(out).toContain('#3 agent.tool_use bash {"command":"step 1"} on sandbox-1');
    expect(out).not.toMatch(/sevt_|processed_at|2025-/);
  });

  it('counts back from the newest with a negative from', () => {
    const out = sessionEvents({ from: -3 }, log().events);
    expect(out.split('\n').slice(1).map((l) => l.split(' ')[0])).toEqual(['#122', '#123', '#124']);
  });

  it('filters by type and by text, case-insensitively', () => {
    const events = log().events;
    expect(sessionEvents({ query: 'disk FULL' }, events)).toMatch(/^1 event match .*\n#\d+ agent\.tool_result output of step 7: ERROR disk full$/);
    const users = sessionEvents({ types: ['user.message'] }, events);
    expect(users.split('\n')).toHaveLength(2);
  });

  it('caps what it returns and says how to get the rest', () => {
    const out = sessionEvents({ limit: 10 }, log().events);
    expect(out.split('\n')).toHaveLength(11);
    expect(out.split('\n')[0]).toContain('showing 10');
  });

  it('refuses bad input naming the field', () => {
    expect(() => sessionEvents({ from: 'yesterday' }, log().events)).toThrow(ToolError);
    expect(() => sessionEvents({ limit: 5000 }, log().events)).toThrow(/limit/);
    expect(() => sessionEvents({ since: 3 }, log().events)).toThrow(/since/);
  });
});
