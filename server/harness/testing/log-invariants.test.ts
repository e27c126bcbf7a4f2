import { describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';

/**
 * The checker the split-brain and chaos tests rely on must be able to fail: a well-formed log
 * passes, and each rule catches the damage it is about.
 */
const USAGE = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** Builds a log the way the store does: contiguous seqs, one processed_at per append. */
class Log {
  readonly events: StoredEvent[] = [];
  private clock = Date.parse('2026-01-01T00:00:00.000Z');

  append(...batch: NewEvent[]): StoredEvent[] {
    const processedAt = new Date((this.clock += 1000)).toISOString();
    const stored = batch.map((e) => {
      const seq = this.events.length + 1;
      const s: StoredEvent = { ...e, id: `sevt_${String(seq).padStart(4, '0')}`, session_id: 'sesn_1', seq, processed_at: processedAt };
      this.events.push(s);
      return s;
    });
    return stored;
  }

  message(text: string): StoredEvent {
    return this.append({ type: 'user.message', content: [{ type: 'text', text }] })[0]!;
  }

  start(): StoredEvent {
    return this.append({ type: 'span.model_request_start', model: 'm' })[0]!;
  }

  /** One model turn: its output and the span end, in one append. */
  turn(start: StoredEvent, output: NewEvent[], isError = false): StoredEvent[] {
    return this.append(...output, { type: 'span.model_request_end', model_request_start_id: start.id, is_error: isError, model_usage: USAGE });
  }

  result(use: StoredEvent, type: 'agent.tool_result' | 'user.tool_result' = 'agent.tool_result'): StoredEvent {
    return this.append({ type, tool_use_id: use.id, content: [{ type: 'text', text: 'ok' }] })[0]!;
  }

  idle(reason: 'end_turn' | 'retries_exhausted' = 'end_turn'): StoredEvent {
    return this.append({ type: 'session.status_idle', stop_reason: { type: reason }, stop_details: null })[0]!;
  }

  running(): StoredEvent {
    return this.append({ type: 'session.status_running' })[0]!;
  }
}

const text = (t: string): NewEvent => ({ type: 'agent.message', content: [{ type: 'text', text: t }] });
const use = (name: string, n: number): NewEvent => ({ type: 'agent.tool_use', name, input: { path: `f${n}` }, model_tool_use_id: `toolu_${n}`, hand: 'memory-1' });

/**
 * A session that saw everything a crash-and-race log can legitimately hold: a turn abandoned by a
 * crash and re-asked, a failed attempt and its retry, parallel calls, a browser result, a second
 * user message, a retries_exhausted episode and a fresh start after it.
 */
function wellFormed(): Log {
  const log = new Log();
  log.message('hi');
  log.running();
  log.start(); // abandoned: its harness died mid-stream
  const s2 = log.start();
  const [u1, u2] = log.turn(s2, [text('two things'), use('write', 1), use('read', 2)]).filter((e) => e.type === 'agent.tool_use');
  log.append({ type: 'hand.provisioned', hand: 'memory-1', kind: 'memory' });
  log.result(u2!);
  log.result(u1!, 'user.tool_result');
  const s3 = log.start();
  log.turn(s3, [], true);
  log.append({ type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 5 });
  log.running();
  const s4 = log.start();
  log.turn(s4, [{ type: 'agent.thinking', content: [{ type: 'thinking', thinking: 'done', signature: 'sig' }] }, text('all done')]);
  log.idle();
  log.message('again');
  log.running();
  const s5 = log.start();
  log.append(
    { type: 'span.model_request_end', model_request_start_id: s5.id, is_error: true, model_usage: USAGE },
    { type: 'session.error', error: { type: 'model_request_failed_error', message: 'bad', retry_status: { type: 'terminal' } } },
    { type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' }, stop_details: null },
  );
  log.message('third time');
  log.running();
  log.turn(log.start(), [text('here')]);
  log.idle();
  return log;
}

/** Re-numbers a log after a test removed or reordered events, so only the intended damage shows. */
function renumber(events: StoredEvent[]): StoredEvent[] {
  return events.map((e, i) => ({ ...e, seq: i + 1 }));
}

const rules = (violations: string[]) => [...new Set(violations.map((v) => /^\[([a-z-]+)\]/.exec(v)?.[1]))];

describe('checkLogInvariants', () => {
  it('accepts a log with a crash-abandoned turn, a retry, parallel calls and an exhausted episode', () => {
    expect(checkLogInvariants(wellFormed().events)).toEqual([]);
  });

  it('accepts an unsettled log whose newest turn and calls are still in flight, and flags them once settled', () => {
    const log = new Log();
    log.message('go');
    log.running();
    const [u] = log.turn(log.start(), [use('write', 1)]);
    log.running(); // harmless repeat
    expect(checkLogInvariants(log.events, { settled: false })).toEqual([]);
    log.result(u!);
    log.start();
    expect(checkLogInvariants(log.events, { settled: false })).toEqual([]);
    expect(rules(checkLogInvariants(log.events))).toEqual(['span-open', 'settled']);
  });

  it('detects a gap, a repeat and a foreign session in seq order', () => {
    const events = wellFormed().events;
    expect(rules(checkLogInvariants(events.filter((e) => e.seq !== 5)))).toContain('seq');
    const dup = [...events.slice(0, 4), { ...events[3]!, seq: 5 }, ...events.slice(4).map((e) => ({ ...e, seq: e.seq + 1 }))];
    expect(checkLogInvariants(dup).join('\n')).toMatch(/\[seq\] event id sevt_0004 is stored twice/);
    const foreign = events.map((e, i) => (i === 2 ? { ...e, session_id: 'sesn_2' } : e));
    expect(checkLogInvariants(foreign).join('\n')).toMatch(/\[seq\] one log holds events of 2 sessions/);
  });

  it('detects an agent.message outside a turn batch (a turn stored half, or in two appends)', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    const s = log.start();
    log.append(text('half a turn')); // the crash happened before the span end was written
    log.append({ type: 'span.model_request_end', model_request_start_id: s.id, is_error: false, model_usage: USAGE });
    log.idle();
    const found = checkLogInvariants(log.events);
    expect(found.join('\n')).toMatch(/\[turn-atomic\] turn seq 4 agent.message .* was not stored in one append/);

    const orphan = new Log();
    orphan.message('hi');
    orphan.running();
    orphan.append(text('who asked?'));
    orphan.idle();
    expect(checkLogInvariants(orphan.events).join('\n')).toMatch(/\[turn-atomic\] seq 3 agent.message .* not followed by a successful span.model_request_end/);
  });

  it.each([
    ['the streamed text marked interrupted, then an interrupted end', true, 'interrupted', true],
    ['an unmarked message before an interrupted end', false, 'interrupted', false],
    ['a marked message before an error end that was no interrupt', true, 'model_error', false],
  ] as const)('an interrupted turn kept as far as it streamed: %s is well-formed: %s', (_, marked, stopReason, ok) => {
    const log = new Log();
    log.message('count');
    log.running();
    const s = log.start();
    log.append({ type: 'user.interrupt' });
    log.append(
      { type: 'agent.message', content: [{ type: 'text', text: '1, 2, ' }], ...(marked ? { interrupted: true as const } : {}) },
      { type: 'span.model_request_end', model_request_start_id: s.id, is_error: true, model_usage: USAGE, model_stop_reason: stopReason },
    );
    log.idle();
    expect(checkLogInvariants(log.events).filter((f) => f.startsWith('[turn-atomic]'))).toHaveLength(ok ? 0 : 1);
  });

  it('detects a turn stored twice, an end without a start, and an interleaved stale turn', () => {
    const twice = new Log();
    twice.message('hi');
    twice.running();
    const s = twice.start();
    twice.turn(s, [text('one')]);
    twice.message('more');
    twice.turn(s, [text('one again')]);
    twice.idle();
    expect(checkLogInvariants(twice.events).join('\n')).toMatch(/\[span\] seq 3 span.model_request_start \S+ is ended twice/);

    const unknown = new Log();
    unknown.message('hi');
    unknown.running();
    unknown.append({ type: 'span.model_request_end', model_request_start_id: 'sevt_nope', is_error: true, model_usage: USAGE });
    unknown.idle();
    expect(checkLogInvariants(unknown.events).join('\n')).toMatch(/\[span\] .* ends sevt_nope, which is not a span.model_request_start stored before it/);

    // Harness A started a turn, lost its lease; B started its own; A's answer still got in.
    const stale = new Log();
    stale.message('hi');
    stale.running();
    const a = stale.start();
    const b = stale.start();
    stale.turn(a, [text('from A')]);
    stale.turn(b, [text('from B')]);
    stale.idle();
    const found = checkLogInvariants(stale.events).join('\n');
    expect(found).toMatch(/\[span\] seq 6 span.model_request_end .* closes seq 3 .* after a newer seq 4/);
    expect(found).toMatch(/\[fork\] seq 8 span.model_request_end .* answers no new input/);
  });

  it('detects a turn that never ended and was never re-asked', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    log.start();
    log.idle();
    expect(checkLogInvariants(log.events).join('\n')).toMatch(/\[span-open\] seq 3 span.model_request_start .* never ended/);
    // …unless the user stopped it.
    const stopped = new Log();
    stopped.message('hi');
    stopped.running();
    stopped.start();
    stopped.append({ type: 'user.interrupt' });
    stopped.idle();
    expect(checkLogInvariants(stopped.events)).toEqual([]);
  });

  it('detects a model request started while the session is idle', () => {
    const log = new Log();
    log.message('hi');
    log.turn(log.start(), [text('I did not say I was running')]);
    log.idle();
    expect(rules(checkLogInvariants(log.events))).toEqual(['status']);
  });

  it('detects a fork: two successful turns answering the same input', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    log.turn(log.start(), [text('answer from A')]);
    log.turn(log.start(), [text('answer from B')]);
    log.idle();
    expect(rules(checkLogInvariants(log.events))).toEqual(['fork']);
  });

  it('detects a second result for one call, a result for an unknown call and a call left unanswered', () => {
    const base = new Log();
    base.message('hi');
    base.running();
    const [u] = base.turn(base.start(), [use('bash', 1)]);
    base.result(u!);
    base.result(u!, 'user.tool_result');
    base.turn(base.start(), [text('ok')]);
    base.idle();
    expect(checkLogInvariants(base.events).join('\n')).toMatch(/\[tool-result\] sevt_0004 has more than one result: seq 6 agent.tool_result .*, seq 7 user.tool_result/);

    const stray = new Log();
    stray.message('hi');
    stray.running();
    stray.append({ type: 'agent.tool_result', tool_use_id: 'sevt_ghost', content: [] });
    stray.turn(stray.start(), [text('ok')]);
    stray.idle();
    expect(checkLogInvariants(stray.events).join('\n')).toMatch(/\[tool-result\] seq 3 agent.tool_result .* answers sevt_ghost/);

    const open = new Log();
    open.message('hi');
    open.running();
    open.turn(open.start(), [use('bash', 1)]);
    open.idle();
    const found = checkLogInvariants(open.events).join('\n');
    expect(found).toMatch(/\[idle\] seq 6 session.status_idle .* idles with calls still unanswered: seq 4 agent.tool_use/);
    expect(found).toMatch(/\[tool-result\] seq 4 agent.tool_use .* has no result in a settled log/);
  });

  it('detects an idle over a user.message that no turn started after (a message sent mid-turn)', () => {
    const log = new Log();
    log.message('first');
    log.running();
    const s = log.start();
    log.message('second, sent while the answer streamed');
    log.turn(s, [text('answer to the first')]);
    log.idle();
    expect(checkLogInvariants(log.events).join('\n')).toMatch(/\[idle\] seq 7 session.status_idle .* idles over seq 4 user.message/);
  });

  it('detects a retries_exhausted idle without its session.error', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    log.turn(log.start(), [], true);
    log.idle('retries_exhausted');
    expect(rules(checkLogInvariants(log.events))).toEqual(['idle']);
  });

  it('detects a hand provisioned twice under one name', () => {
    const log = wellFormed();
    const events = [...log.events];
    const hand = events.find((e) => e.type === 'hand.provisioned')!;
    events.splice(hand.seq, 0, { ...hand, id: 'sevt_again' });
    expect(rules(checkLogInvariants(renumber(events)))).toEqual(['hand']);
  });

  it('accepts a log that ends terminated: a turn cut at its budget, its idle, then the end', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    const start = log.start();
    log.append({ type: 'user.interrupt' }, { type: 'session.error', error: { type: 'unknown_error', message: 'limit', retry_status: { type: 'terminal' } } });
    log.turn(start, [], true);
    log.idle();
    log.append({ type: 'session.status_terminated' });
    // A hand released afterwards asks nothing.
    log.append({ type: 'hand.released', hand: 'memory-1' });
    expect(checkLogInvariants(log.events)).toEqual([]);
  });

  it('detects input, a status or a second end after session.status_terminated', () => {
    const ended = () => {
      const log = new Log();
      log.message('hi');
      log.running();
      log.turn(log.start(), [text('ok')]);
      log.idle();
      log.append({ type: 'session.status_terminated' });
      return log;
    };
    const message = ended();
    message.message('still there?');
    expect(rules(checkLogInvariants(message.events))).toContain('terminated');
    const revived = ended();
    revived.running();
    expect(rules(checkLogInvariants(revived.events, { settled: false }))).toEqual(['terminated']);
    const twice = ended();
    twice.append({ type: 'session.status_terminated' });
    expect(rules(checkLogInvariants(twice.events))).toEqual(['terminated']);
  });

  it('detects a settled log that does not end idle', () => {
    const log = new Log();
    log.message('hi');
    log.running();
    log.turn(log.start(), [text('ok')]);
    expect(rules(checkLogInvariants(log.events))).toEqual(['settled']);
    expect(checkLogInvariants(log.events, { settled: false })).toEqual([]);
  });
});

describe('the outcome rule', () => {
  /** An outcome worked on once and graded once, as the harness stores it. */
  function graded(): { log: Log; evalStart: StoredEvent } {
    const log = new Log();
    log.append({ type: 'user.define_outcome', outcome_id: 'outc_1', description: 'd', rubric: { type: 'text', content: 'r' }, max_iterations: 3 });
    log.append({ type: 'session.status_running' });
    log.turn(log.start(), [{ type: 'agent.message', content: [{ type: 'text', text: 'done' }] }]);
    const [evalStart] = log.append({ type: 'span.outcome_evaluation_start', outcome_id: 'outc_1', iteration: 0 });
    return { log, evalStart: evalStart! };
  }
  const end = (start: StoredEvent, iteration = 0): NewEvent => ({ type: 'span.outcome_evaluation_end', outcome_evaluation_start_id: start.id, outcome_id: 'outc_1', iteration, result: 'satisfied', explanation: 'ok', usage: USAGE });

  it('passes an outcome graded once', () => {
    const { log, evalStart } = graded();
    log.append(end(evalStart));
    log.append({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    expect(checkLogInvariants(log.events)).toEqual([]);
  });

  it('catches a verdict stored twice, one naming the wrong iteration, and a settled log with an evaluation left open', () => {
    const twice = graded();
    twice.log.append(end(twice.evalStart));
    twice.log.append(end(twice.evalStart));
    twice.log.append({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    expect(checkLogInvariants(twice.log.events).join('\n')).toContain('[outcome]');
    expect(checkLogInvariants(twice.log.events).join('\n')).toContain('ended twice');

    const wrong = graded();
    wrong.log.append(end(wrong.evalStart, 1));
    expect(checkLogInvariants(wrong.log.events, { settled: false }).join('\n')).toContain('iteration 1');

    const open = graded();
    open.log.append({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    expect(checkLogInvariants(open.log.events).join('\n')).toContain('has no end in a settled log');
  });
});
