import { describe, expect, it } from 'vitest';
import {
  type NewEvent,
  type StopReason,
  type StoredEvent,
  type StoredEventOf,
  SIDE_EVENT_TYPES,
  parseStoredEvent,
} from '~/lib/events';
import { buildContext } from '~/server/harness/core/context';
import { type Action, type ToolUse, decide, foldLog } from '~/server/harness/core/decide';
import { StoredLog } from '~/server/harness/testing/log-builder';
import { mulberry32 as rng } from '~/lib/prng';

// ── a tiny log builder: seq, id and processed_at are assigned like the store does ──

const USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** When the builder stamps event n: the start plus n seconds. */
const T0 = Date.UTC(2025, 0, 1);

class Log extends StoredLog {
  decide(): Action {
    return decide(this.events);
  }

  user(text = 'hello'): StoredEventOf<'user.message'> {
    return this.add({ type: 'user.message', content: [{ type: 'text', text }] });
  }
  interrupt() {
    return this.add({ type: 'user.interrupt' });
  }
  running() {
    return this.add({ type: 'session.status_running' });
  }
  idle(stop_reason: StopReason = { type: 'end_turn' }) {
    return this.add({ type: 'session.status_idle', stop_reason, stop_details: null });
  }
  spanStart() {
    return this.add({ type: 'span.model_request_start', model: 'claude-test' });
  }
  spanEnd(start: StoredEvent, isError: boolean | null) {
    return this.add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: isError, model_usage: USAGE });
  }
  toolUse(name = 'bash', n = this.events.length): ToolUse {
    return this.add({ type: 'agent.tool_use', name, input: { command: `echo ${n}` }, model_tool_use_id: `toolu_${n}` });
  }
  result(call: ToolUse, opts: { by?: 'agent' | 'user'; isError?: boolean } = {}) {
    const body = { tool_use_id: call.id, content: [{ type: 'text' as const, text: 'out' }], ...(opts.isError ? { is_error: true } : {}) };
    return opts.by === 'user' ? this.add({ type: 'user.tool_result', ...body }) : this.add({ type: 'agent.tool_result', ...body });
  }
  /** One successful model turn: span, optional text, `tools` tool calls, span end. */
  turn(tools = 0, text = 'ok'): ToolUse[] {
    const start = this.spanStart();
    if (text) this.add({ type: 'agent.message', content: [{ type: 'text', text }] });
    const calls = Array.from({ length: tools }, () => this.toolUse());
    this.spanEnd(start, false);
    return calls;
  }
  /** A failed model attempt the harness will retry. */
  failedAttempt(attempt: number) {
    this.spanEnd(this.spanStart(), true);
    this.add({ type: 'session.status_rescheduled', attempt, retry_in_ms: 100 });
  }
}

/** A running session that has been asked something: `user.message` + `session.status_running`. */
function asked(): Log {
  const log = new Log();
  log.user();
  log.running();
  return log;
}

const ids = (calls: readonly ToolUse[]) => calls.map((c) => c.id);

describe('decide: the happy path', () => {
  it('does nothing on an empty log', () => {
    expect(decide([])).toEqual({ kind: 'none' });
  });

  it('marks an idle session running when a user.message arrives', () => {
    const log = new Log();
    log.user();
    expect(log.decide()).toEqual({ kind: 'mark_running' });
  });

  it('calls the model, attempt 1, once the session is running', () => {
    expect(asked().decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('runs exactly the calls of a turn that ended with tool uses', () => {
    const log = asked();
    const calls = log.turn(2);
    const action = log.decide();
    expect(action.kind).toBe('run_tools');
    if (action.kind === 'run_tools') expect(ids(action.calls)).toEqual(ids(calls));
  });

  it('runs only the calls still missing a result after some results are in', () => {
    const log = asked();
    const [a, b, c] = log.turn(3);
    log.result(b!);
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [a, c] });
  });

  it('calls the model again, attempt 1, once every call has a result', () => {
    const log = asked();
    const calls = log.turn(2);
    for (const c of calls) log.result(c);
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('counts an error result as an answer: the model reads it next', () => {
    const log = asked();
    const [a] = log.turn(1);
    log.result(a!, { isError: true });
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('accepts a user.tool_result (a browser hand) as the answer to a call', () => {
    const log = asked();
    const [a, b] = log.turn(2);
    log.result(a!, { by: 'user' });
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [b] });
    log.result(b!, { by: 'user' });
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('ignores a result for a call that was never made', () => {
    const log = asked();
    const [a] = log.turn(1);
    log.add({ type: 'agent.tool_result', tool_use_id: 'sevt_nonexistent' });
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [a] });
  });

  it('goes idle with end_turn after a turn without tool calls', () => {
    const log = asked();
    log.turn(0);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('does nothing once idle after a finished turn', () => {
    const log = asked();
    log.turn(0);
    log.idle();
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('ignores events that carry no work (hands, thinking, compaction)', () => {
    const log = asked();
    log.turn(0);
    log.idle();
    log.add({ type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' });
    log.add({ type: 'agent.thread_context_compacted' });
    log.add({ type: 'hand.lost', hand: 'sandbox-1', reason: 'gone' });
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('decides the same with a side event (SIDE_EVENT_TYPES) appended at any point of a log', () => {
    const side: Record<string, NewEvent> = {
      'hand.provisioned': { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' },
      'hand.reattached': { type: 'hand.reattached', hand: 'remote-1' },
      'hand.released': { type: 'hand.released', hand: 'sandbox-1' },
      'hand.lost': { type: 'hand.lost', hand: 'sandbox-1', reason: 'gone' },
      'hand.suspended': { type: 'hand.suspended', hand: 'sandbox-1', reason: 'idle' },
      'hand.resumed': { type: 'hand.resumed', hand: 'sandbox-1', resume_ms: 3 },
      'hand.repository_cloned': { type: 'hand.repository_cloned', hand: 'sandbox-1', resource_id: 'sesrsc_1', repository_url: 'https://h/r', mount_path: '/workspace/r' },
      'user.file_edit': { type: 'user.file_edit', hand: 'sandbox-1', path: 'a.txt', content: 'x' },
      'mcp.tools_listed': { type: 'mcp.tools_listed', servers: [{ mcp_server_name: 'docs', tools: [] }] },
      'span.outcome_evaluation_ongoing': { type: 'span.outcome_evaluation_ongoing', outcome_id: 'outc_1', iteration: 0 },
      'session.updated': { type: 'session.updated', title: 'Renamed' },
      'session.usage': { type: 'session.usage', usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } } },
    };
    expect(Object.keys(side).sort()).toEqual([...SIDE_EVENT_TYPES].sort());
    const log = asked();
    const [call] = log.turn(1);
    log.result(call!);
    log.turn(0);
    log.idle();
    log.user('again');
    log.interrupt();
    for (let n = 0; n <= log.events.length; n++) {
      const prefix = log.events.slice(0, n);
      for (const e of Object.values(side)) {
        const extra = parseStoredEvent({ ...e, id: 'sevt_side', session_id: 'sesn_test', seq: n + 1, processed_at: new Date(T0).toISOString() });
        expect(decide([...prefix, extra]), `${e.type} after ${n} events`).toEqual(decide(prefix));
      }
    }
  });

  it('runs pending calls first when a user.message arrives mid tool run, then asks the model', () => {
    const log = asked();
    const [a] = log.turn(1);
    log.user('also, check the README');
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [a] });
    log.result(a!);
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });
});

describe('decide: interrupts', () => {
  it('cancels the pending calls when the user interrupts during a tool run', () => {
    const log = asked();
    const [a, b] = log.turn(2);
    log.result(a!);
    log.interrupt();
    const action = log.decide();
    expect(action.kind).toBe('cancel_tools');
    if (action.kind === 'cancel_tools') {
      expect(action.calls).toEqual([b]);
      expect(action.reason).toMatch(/interrupt/);
    }
  });

  it('does not call the model after the cancelled results are in: it goes idle', () => {
    const log = asked();
    const [a] = log.turn(1);
    log.interrupt();
    log.result(a!, { isError: true });
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('goes idle when the user interrupts with nothing pending, then does nothing', () => {
    const log = asked();
    log.interrupt();
    expect(foldLog(log.events).status).toBe('running');
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
    log.idle();
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('drops a model call the user interrupted mid-stream', () => {
    const log = asked();
    const start = log.spanStart();
    log.interrupt();
    log.spanEnd(start, true);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('works again when a new user.message follows an interrupt', () => {
    const log = asked();
    log.interrupt();
    log.idle();
    log.user('try something else');
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('does nothing on an interrupt to an idle session', () => {
    const log = asked();
    log.turn(0);
    log.idle();
    log.interrupt();
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  // The stream may finish just as the user presses stop: the turn's batch lands after the interrupt.
  it('cancels the calls of a turn whose batch landed just after the interrupt', () => {
    const log = asked();
    const start = log.spanStart();
    log.interrupt();
    const a = log.toolUse();
    log.spanEnd(start, false);
    expect(log.decide()).toEqual({ kind: 'cancel_tools', calls: [a], reason: expect.any(String) as unknown });
  });

  // Managed Agents clients redirect an agent by sending `user.interrupt` and a new `user.message`
  // together. The interrupted calls must be cancelled, not run: the user stopped them.
  it('still cancels the interrupted calls when a new user.message follows the interrupt at once', () => {
    const log = asked();
    const [a] = log.turn(1);
    log.interrupt();
    log.user('stop, do not run that; do this instead');
    expect(log.decide()).toEqual({ kind: 'cancel_tools', calls: [a], reason: expect.any(String) as unknown });
  });
});

describe('decide: failures and crashes', () => {
  it('counts failed model attempts up: attempt 2, then 3', () => {
    const log = asked();
    log.failedAttempt(1);
    expect(foldLog(log.events).status).toBe('rescheduling');
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 2 });
    log.failedAttempt(2);
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 3 });
  });

  it('resets the attempt count after an answered turn', () => {
    const log = asked();
    log.failedAttempt(1);
    log.running();
    const [a] = log.turn(1);
    log.result(a!);
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('resets the attempt count on a new user.message', () => {
    const log = asked();
    log.failedAttempt(1);
    log.failedAttempt(2);
    log.running();
    log.user('again');
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('does nothing after retries are exhausted and the session went idle', () => {
    const log = asked();
    log.failedAttempt(1);
    log.running();
    log.spanEnd(log.spanStart(), true);
    log.add({ type: 'session.error', error: { type: 'model_overloaded_error', message: 'Overloaded', retry_status: { type: 'exhausted' } } });
    log.idle({ type: 'retries_exhausted' });
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('asks nothing more once idle at its budget, until a new message', () => {
    const log = asked();
    log.running();
    log.idle({ type: 'budget_reached' });
    expect(log.decide()).toEqual({ kind: 'none' });
    log.user('again');
    expect(log.decide()).toEqual({ kind: 'mark_running' });
  });

  it('stops asking the model after a terminal error, even before the idle event is written', () => {
    const log = asked();
    log.spanEnd(log.spanStart(), true);
    log.add({ type: 'session.error', error: { type: 'model_request_failed_error', message: 'bad request', retry_status: { type: 'terminal' } } });
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('keeps asking after a session.error that is still retrying', () => {
    const log = asked();
    log.add({ type: 'session.error', error: { type: 'model_rate_limited_error', message: '429', retry_status: { type: 'retrying' } } });
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('re-asks an unanswered turn: a span start without an end (crash mid-stream)', () => {
    const log = asked();
    log.spanStart();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
    log.spanStart(); // crashed again
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('never re-asks an answered turn, even with a crashed earlier attempt in the log', () => {
    const log = asked();
    log.spanStart(); // crash
    log.turn(0);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('re-runs calls whose results were never stored (crash mid tool run)', () => {
    const log = asked();
    const calls = log.turn(2);
    log.add({ type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' });
    expect(log.decide()).toEqual({ kind: 'run_tools', calls });
  });

  it('does nothing once the session is terminated, whatever is pending', () => {
    const log = asked();
    log.turn(2);
    log.user('more');
    log.add({ type: 'session.status_terminated' });
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('stays terminated whatever is stored after the end: a running status of a racing step, a result, a message', () => {
    const log = asked();
    log.add({ type: 'session.status_terminated' });
    log.add({ type: 'session.status_running' });
    log.user('more');
    expect(log.decide()).toEqual({ kind: 'none' });
  });
});

describe('decide: calls that wait for the user (always_ask) or the client (custom tools)', () => {
  /** One turn whose calls carry their evaluated permission, or are custom tool calls. */
  function turnWith(log: Log, calls: ('allow' | 'ask' | 'custom')[]) {
    const start = log.spanStart();
    const made = calls.map((kind, i) =>
      kind === 'custom'
        ? log.add({ type: 'agent.custom_tool_use', name: 'lookup', input: { q: i }, model_tool_use_id: `toolu_c${log.events.length}` })
        : log.add({ type: 'agent.tool_use', name: 'bash', input: { command: `echo ${i}` }, model_tool_use_id: `toolu_${log.events.length}`, evaluated_permission: kind }),
    );
    log.spanEnd(start, false);
    return made;
  }
  const confirm = (log: Log, call: { id: string }, result: 'allow' | 'deny', deny_message?: string) =>
    log.add({ type: 'user.tool_confirmation', tool_use_id: call.id, result, ...(deny_message ? { deny_message } : {}) });

  it('goes idle with requires_action naming a call that asks, and never runs it unconfirmed', () => {
    const log = asked();
    const [call] = turnWith(log, ['ask']);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] } });
    log.idle({ type: 'requires_action', event_ids: [call!.id] });
    expect(log.decide()).toEqual({ kind: 'none' });
  });

  it('runs the allowed calls of a turn first, then waits for the one that asks', () => {
    const log = asked();
    const [allowed, asking] = turnWith(log, ['allow', 'ask']);
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [allowed] });
    log.result(allowed as ToolUse);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: [asking!.id] } });
  });

  it('runs a confirmed call after marking the session running, then asks the model', () => {
    const log = asked();
    const [call] = turnWith(log, ['ask']);
    log.idle({ type: 'requires_action', event_ids: [call!.id] });
    confirm(log, call!, 'allow');
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [call] });
    log.result(call as ToolUse);
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it("answers a denied call with the user's message as an error result, never running it", () => {
    const log = asked();
    const [call] = turnWith(log, ['ask']);
    log.idle({ type: 'requires_action', event_ids: [call!.id] });
    confirm(log, call!, 'deny', 'not on main');
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'deny_tools', denials: [{ call, message: 'not on main' }] });
    log.result(call as ToolUse, { isError: true });
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('counts only the first verdict on a call', () => {
    const log = asked();
    const [call] = turnWith(log, ['ask']);
    confirm(log, call!, 'deny');
    confirm(log, call!, 'allow');
    log.running();
    expect(log.decide()).toEqual({ kind: 'deny_tools', denials: [{ call, message: 'The user denied this tool call.' }] });
  });

  it('ignores a confirmation for a call that did not ask', () => {
    const log = asked();
    const [call] = turnWith(log, ['allow']);
    confirm(log, call!, 'deny');
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [call] });
  });

  it('waits for a custom tool result, then asks the model once every call is answered', () => {
    const log = asked();
    const [custom, allowed] = turnWith(log, ['custom', 'allow']);
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [allowed] });
    log.result(allowed as ToolUse);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: [custom!.id] } });
    log.idle({ type: 'requires_action', event_ids: [custom!.id] });
    log.add({ type: 'user.custom_tool_result', custom_tool_use_id: custom!.id, content: [{ type: 'text', text: 'shipped' }] });
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('gives up waiting calls when the user sends a new message instead of answering', () => {
    const log = asked();
    const [asking] = turnWith(log, ['ask', 'custom']);
    log.idle({ type: 'requires_action', event_ids: [] });
    log.user('never mind');
    expect(log.decide()).toEqual({ kind: 'cancel_tools', calls: [asking], reason: expect.any(String) as string });
    log.result(asking as ToolUse, { isError: true });
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('cancels a call that asks when the user interrupts, and then rests', () => {
    const log = asked();
    const [asking] = turnWith(log, ['ask', 'custom']);
    log.interrupt();
    expect(log.decide()).toEqual({ kind: 'cancel_tools', calls: [asking], reason: expect.any(String) as string });
    log.result(asking as ToolUse, { isError: true });
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('builds a valid request around custom calls: the answer, or "not answered" once given up', () => {
    const log = asked();
    const [custom] = turnWith(log, ['custom']);
    log.add({ type: 'user.custom_tool_result', custom_tool_use_id: custom!.id, content: [{ type: 'text', text: 'shipped' }] });
    const [unanswered] = turnWith(log, ['custom']);
    log.user('next');
    const req = buildContext(log.events, { model: 'm', maxTokens: 10, system: 's', tools: [] });
    const results = req.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    expect(results).toEqual([
      expect.objectContaining({ tool_use_id: (custom as StoredEventOf<'agent.custom_tool_use'>).model_tool_use_id, content: [{ type: 'text', text: 'shipped' }] }),
      expect.objectContaining({ tool_use_id: (unanswered as StoredEventOf<'agent.custom_tool_use'>).model_tool_use_id, is_error: true }),
    ]);
  });
});

// ── property: simulate the harness on random logs ──────────────────────────


const MAX_RETRIES = 3;
const MAX_STEPS = 400;

/** Tool uses without a stored result, computed independently of foldLog. */
function unanswered(events: readonly StoredEvent[]): string[] {
  const answered = new Set(events.flatMap((e) => (e.type === 'agent.tool_result' || e.type === 'user.tool_result' ? [e.tool_use_id] : [])));
  return events.filter((e) => e.type === 'agent.tool_use' && !answered.has(e.id)).map((e) => e.id);
}

function lastIndex(events: readonly StoredEvent[], p: (e: StoredEvent) => boolean): number {
  for (let i = events.length - 1; i >= 0; i--) if (p(events[i]!)) return i;
  return -1;
}

const isInput = (e: StoredEvent) => e.type === 'user.message' || e.type === 'agent.tool_result' || e.type === 'user.tool_result';
const isAnswer = (e: StoredEvent) => e.type === 'span.model_request_end' && e.is_error === false;

/** The request is one the Messages API accepts: roles alternate, every tool_use is answered next. */
function assertValidRequest(events: readonly StoredEvent[], where: string) {
  const req = buildContext(events, { model: 'm', maxTokens: 100, system: 's', tools: [] });
  const msgs = req.messages;
  expect(msgs.length, where).toBeGreaterThan(0);
  expect(msgs[0]!.role, where).toBe('user');
  expect(msgs.at(-1)!.role, where).toBe('user');
  msgs.forEach((m, i) => {
    if (i > 0) expect(m.role, `${where}: roles alternate at ${i}`).not.toBe(msgs[i - 1]!.role);
    const blocks = Array.isArray(m.content) ? m.content : [];
    expect(blocks.length, `${where}: message ${i} has content`).toBeGreaterThan(0);
    if (m.role !== 'assistant') return;
    const useIds = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const next = msgs[i + 1];
    const nextBlocks = next && Array.isArray(next.content) ? next.content : [];
    const resultIds = nextBlocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    for (const id of useIds) expect(resultIds, `${where}: ${id} answered in message ${i + 1}`).toContain(id);
  });
}

interface SimResult {
  steps: number;
  events: StoredEvent[];
  actions: Action['kind'][];
}

function simulate(seed: number): SimResult {
  const r = rng(seed);
  const chance = (p: number) => r() < p;
  const log = new Log();
  const actions: Action['kind'][] = [];
  let messagesLeft = 1 + Math.floor(r() * 3);
  let interruptsLeft = Math.floor(r() * 3);
  let crashesLeft = Math.floor(r() * 3);
  let toolTurnsLeft = Math.floor(r() * 5);
  let terminated = false;

  const sendUser = () => {
    messagesLeft--;
    log.user(`message ${messagesLeft}`);
  };
  const sendInterrupt = () => {
    interruptsLeft--;
    log.interrupt();
  };

  sendUser();
  for (let step = 1; step <= MAX_STEPS; step++) {
    // Other writers act between steps: a user (message, interrupt), an operator (terminate).
    if (!terminated) {
      if (messagesLeft > 0 && chance(0.05)) sendUser();
      if (interruptsLeft > 0 && chance(0.05)) sendInterrupt();
      if (chance(0.005)) {
        terminated = true;
        log.add({ type: 'session.status_terminated' });
      }
    }
    const events = log.events;
    const where = `seed ${seed}, step ${step}`;
    const action = decide(events);
    actions.push(action.kind);
    const pending = unanswered(events);

    switch (action.kind) {
      case 'none': {
        if (!terminated) {
          expect(pending, `${where}: nothing is left pending at rest`).toEqual([]);
          const lastStatus = events.findLast((e) => e.type.startsWith('session.status_'));
          // (A session that never ran has no status event: it is idle by default.)
          expect(lastStatus?.type ?? 'session.status_idle', `${where}: at rest the session is idle`).toBe('session.status_idle');
          // Every input was dealt with: interrupted (results after it are cancellations), or
          // answered, or given up on.
          const interrupted = lastIndex(events, (e) => e.type === 'user.interrupt') > lastIndex(events, (e) => e.type === 'user.message');
          const settled = lastIndex(events, (e) => isAnswer(e) || (e.type === 'session.error' && e.error.retry_status.type !== 'retrying'));
          if (!interrupted) expect(settled, `${where}: the last input was settled`).toBeGreaterThan(lastIndex(events, isInput));
        }
        if (terminated || messagesLeft === 0) return { steps: step, events, actions };
        sendUser(); // a later message wakes the session again
        break;
      }
      case 'mark_running':
        log.running();
        break;
      case 'go_idle':
        expect(pending, where).toEqual([]);
        log.idle(action.stop_reason);
        break;
      case 'cancel_tools':
        for (const id of ids(action.calls)) expect(pending, where).toContain(id);
        for (const c of action.calls) log.result(c, { isError: true });
        break;
      case 'fail_tools':
        // Only a self-hosted session's calls fail so; this simulation makes none.
        throw new Error(`${where}: fail_tools without a self-hosted call`);
      case 'deny_tools':
        // The random logs make no call that asks, so nothing is ever denied.
        throw new Error(`${where}: denied ${action.denials.length} calls nobody asked about`);
      case 'evaluate_outcome':
      case 'end_evaluation':
        // The random logs define no outcome (outcomes.test.ts walks those).
        throw new Error(`${where}: ${action.kind} with no outcome defined`);
      case 'run_tools': {
        expect(ids(action.calls).sort(), `${where}: runs exactly the pending calls`).toEqual([...pending].sort());
        // A call the user interrupted is never run: neither one made before the interrupt, nor
        // one of the interrupted turn that landed after it (before the next user.message).
        for (const c of action.calls) {
          const at = events.indexOf(c);
          const stoppedAfter = events.slice(at + 1).some((e) => e.type === 'user.interrupt');
          const lastInterrupt = lastIndex(events.slice(0, at), (e) => e.type === 'user.interrupt');
          const lastMessage = lastIndex(events.slice(0, at), (e) => e.type === 'user.message');
          expect(stoppedAfter || lastInterrupt > lastMessage, `${where}: runs ${c.id}, which the user interrupted`).toBe(false);
        }
        // The step may be cut short: by an interrupt, or by a crash after some results.
        const cut = interruptsLeft > 0 && chance(0.15) ? 'interrupt' : crashesLeft > 0 && chance(0.15) ? 'crash' : null;
        const done = cut ? action.calls.filter(() => chance(0.5)) : action.calls;
        for (const c of done) log.result(c, { by: chance(0.2) ? 'user' : 'agent', isError: chance(0.2) });
        if (cut === 'interrupt') {
          sendInterrupt();
          if (messagesLeft > 0 && chance(0.5)) sendUser(); // redirect: interrupt + new message at once
        }
        if (cut === 'crash') crashesLeft--;
        break;
      }
      case 'call_model': {
        // Never re-ask an answered turn: some input must have arrived since the last answer.
        const lastAnswer = lastIndex(events, isAnswer);
        expect(lastIndex(events, isInput), `${where}: call_model re-asks an answered turn`).toBeGreaterThan(lastAnswer);
        expect(pending, `${where}: call_model with calls unanswered`).toEqual([]);
        expect(lastIndex(events, (e) => e.type === 'user.interrupt'), `${where}: call_model after an interrupt`).toBeLessThan(
          lastIndex(events, (e) => e.type === 'user.message'),
        );
        // The attempt counts failed attempts since the last answer or user message.
        const since = Math.max(lastAnswer, lastIndex(events, (e) => e.type === 'user.message'));
        const failed = events.slice(since + 1).filter((e) => e.type === 'session.status_rescheduled').length;
        expect(action.attempt, `${where}: attempt number`).toBe(failed + 1);
        assertValidRequest(events, where);

        const start = log.spanStart();
        const roll = r();
        if (crashesLeft > 0 && roll < 0.1) {
          crashesLeft--; // died mid-stream: no span end, nothing stored
        } else if (interruptsLeft > 0 && roll < 0.2) {
          sendInterrupt();
          log.add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: true, model_usage: USAGE, model_stop_reason: 'interrupted' });
        } else if (interruptsLeft > 0 && roll < 0.25) {
          sendInterrupt(); // the stream had just finished: the whole turn lands after the interrupt
          for (let i = 0; i < 1 + Math.floor(r() * 2); i++) log.toolUse();
          log.spanEnd(start, false);
        } else if (roll < 0.4) {
          log.spanEnd(start, true);
          if (action.attempt > MAX_RETRIES) {
            log.add({ type: 'session.error', error: { type: 'model_overloaded_error', message: 'Overloaded', retry_status: { type: 'exhausted' } } });
            log.idle({ type: 'retries_exhausted' });
          } else {
            log.add({ type: 'session.status_rescheduled', attempt: action.attempt, retry_in_ms: 10 });
          }
        } else {
          if (chance(0.3)) log.add({ type: 'agent.thinking', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }] });
          if (chance(0.8)) log.add({ type: 'agent.message', content: [{ type: 'text', text: `answer ${step}` }] });
          const tools = toolTurnsLeft > 0 && chance(0.6) ? 1 + Math.floor(r() * 3) : 0;
          if (tools > 0) toolTurnsLeft--;
          for (let i = 0; i < tools; i++) log.toolUse(chance(0.5) ? 'bash' : 'read');
          log.spanEnd(start, false);
        }
        break;
      }
    }
  }
  throw new Error(`seed ${seed}: no rest within ${MAX_STEPS} steps; last actions ${actions.slice(-20).join(', ')}`);
}

describe('decide: simulated harness runs', () => {
  it('always comes to rest, never re-asks an answered turn, never runs an interrupted call and asks only valid requests, over 200 random logs', () => {
    const kinds = new Set<string>();
    const seen = new Set<string>();
    let longest = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const run = simulate(seed);
      for (const k of run.actions) kinds.add(k);
      const ended = new Set(run.events.flatMap((e) => (e.type === 'span.model_request_end' ? [e.model_request_start_id] : [])));
      for (const e of run.events) {
        if (e.type === 'session.status_idle') seen.add(`idle:${e.stop_reason.type}`);
        else if (e.type === 'span.model_request_start' && !ended.has(e.id)) seen.add('crash mid-stream');
        else seen.add(e.type);
      }
      longest = Math.max(longest, run.steps);
      // The log the simulation produced is itself valid event by event, seq contiguous.
      run.events.forEach((e, i) => expect(e.seq).toBe(i + 1));
    }
    // The random runs exercised every kind of action.
    expect([...kinds].sort()).toEqual(['call_model', 'cancel_tools', 'go_idle', 'mark_running', 'none', 'run_tools']);
    // …and the situations the harness must survive.
    for (const s of ['idle:retries_exhausted', 'crash mid-stream', 'user.interrupt', 'user.tool_result', 'session.status_terminated', 'session.status_rescheduled']) {
      expect(seen, s).toContain(s);
    }
    expect(longest).toBeLessThan(MAX_STEPS);
  });

  it('is pure: deciding twice on the same log gives the same action and leaves the log untouched', () => {
    const { events } = simulate(7);
    for (let n = 1; n <= events.length; n++) {
      const prefix = events.slice(0, n);
      const before = JSON.stringify(prefix);
      expect(decide(prefix)).toEqual(decide(prefix));
      expect(JSON.stringify(prefix)).toBe(before);
    }
  });
});

describe('decide: input that arrives mid-turn', () => {
  it('asks the model again for a user.message stored while a turn was streaming', () => {
    const events: StoredEvent[] = [];
    const add = (e: NewEvent) => {
      const stored = { ...e, id: `sevt_${String(events.length + 1).padStart(26, '0')}`, session_id: 'sesn_test', seq: events.length + 1, processed_at: new Date(0).toISOString() };
      events.push(stored);
      return stored;
    };
    add({ type: 'user.message', content: [{ type: 'text', text: 'first' }] });
    add({ type: 'session.status_running' });
    const start = add({ type: 'span.model_request_start' });
    add({ type: 'user.message', content: [{ type: 'text', text: 'second, while streaming' }] });
    add({ type: 'agent.message', content: [{ type: 'text', text: 'answer to first' }] });
    add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
    expect(decide(events)).toEqual({ kind: 'call_model', attempt: 1 });
  });
});

describe('decide: MCP calls (agent.mcp_tool_use), under the same policies as any tool', () => {
  const mcpCall = (log: Log, permission?: 'allow' | 'ask' | 'deny') => {
    const start = log.spanStart();
    const call = log.add({ type: 'agent.mcp_tool_use', name: 'echo', mcp_server_name: 'everything', input: { message: 'hi' }, model_tool_use_id: `toolu_m${log.events.length}`, ...(permission ? { evaluated_permission: permission } : {}) });
    log.spanEnd(start, false);
    return call;
  };
  const mcpResult = (log: Log, call: { id: string }, isError = false) =>
    log.add({ type: 'agent.mcp_tool_result', mcp_tool_use_id: call.id, content: [{ type: 'text', text: 'Echo: hi' }], is_error: isError });

  it('runs an allowed MCP call, then asks the model once it has its result', () => {
    const log = asked();
    const call = mcpCall(log, 'allow');
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [call] });
    mcpResult(log, call);
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('waits for a confirmation under always_ask (requires_action naming it), then runs it once allowed', () => {
    const log = asked();
    const call = mcpCall(log, 'ask');
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: [call.id] } });
    log.idle({ type: 'requires_action', event_ids: [call.id] });
    expect(log.decide()).toEqual({ kind: 'none' });
    log.add({ type: 'user.tool_confirmation', tool_use_id: call.id, result: 'allow' });
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'run_tools', calls: [call] });
  });

  it("answers a denied MCP call (by the user, or by the policy) with an error, never running it", () => {
    const log = asked();
    const call = mcpCall(log, 'ask');
    log.add({ type: 'user.tool_confirmation', tool_use_id: call.id, result: 'deny', deny_message: 'not that server' });
    expect(log.decide()).toEqual({ kind: 'deny_tools', denials: [{ call, message: 'not that server' }] });
    const refused = asked();
    const other = mcpCall(refused, 'deny');
    expect(refused.decide()).toEqual({ kind: 'deny_tools', denials: [{ call: other, message: expect.stringMatching(/not allowed/) as string }] });
  });

  it('an answered MCP call is not run again, and an MCP session.error does not end the turn', () => {
    const log = asked();
    const call = mcpCall(log, 'allow');
    mcpResult(log, call, true);
    log.add({ type: 'session.error', error: { type: 'mcp_authentication_failed_error', message: 'MCP server "everything" refused the credential', retry_status: { type: 'exhausted' }, mcp_server_name: 'everything' } });
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
    // A model error that is exhausted still ends it.
    log.add({ type: 'session.error', error: { type: 'model_request_failed_error', message: 'no', retry_status: { type: 'exhausted' } } });
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('an interrupt cancels a pending MCP call, and a new message gives up one that waits', () => {
    const log = asked();
    const call = mcpCall(log, 'allow');
    log.interrupt();
    expect(log.decide()).toEqual({ kind: 'cancel_tools', calls: [call], reason: expect.any(String) as string });
    const other = asked();
    const waiting = mcpCall(other, 'ask');
    other.idle({ type: 'requires_action', event_ids: [waiting.id] });
    other.user('never mind');
    expect(other.decide()).toEqual({ kind: 'cancel_tools', calls: [waiting], reason: expect.any(String) as string });
  });

  it('shows MCP calls to the model as tool_use/tool_result under their mcp__server__tool name', () => {
    const log = asked();
    const call = mcpCall(log, 'allow');
    mcpResult(log, call);
    const req = buildContext(log.events, { model: 'm', maxTokens: 10, system: 's', tools: [] });
    expect(req.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: call.model_tool_use_id, name: 'mcp__everything__echo', input: { message: 'hi' } }] });
    expect(JSON.stringify(req.messages[2])).toContain(`"tool_use_id":"${call.model_tool_use_id}"`);
    expect(JSON.stringify(req.messages[2])).toContain('Echo: hi');
  });
});

describe('decide: a self-hosted session (its calls answered by a worker)', () => {
  function workerCall(log: Log): ToolUse {
    const start = log.spanStart();
    const call = log.add({ type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: `toolu_w${log.events.length}`, hand: 'self_hosted', evaluated_permission: 'allow' });
    log.spanEnd(start, false);
    return call;
  }

  it('never runs a worker call here: the session idles requires_action, saying a worker is needed', () => {
    const log = asked();
    const call = workerCall(log);
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: [call.id] }, worker: true });
    log.idle({ type: 'requires_action', event_ids: [call.id] });
    expect(log.decide()).toEqual({ kind: 'none' });
    log.result(call, { by: 'user' });
    expect(log.decide()).toEqual({ kind: 'mark_running' });
  });

  it('fails the calls still open when their worker is lost, naming it, and only those', () => {
    const log = asked();
    const done = workerCall(log);
    log.result(done, { by: 'user' });
    const open = workerCall(log);
    log.idle({ type: 'requires_action', event_ids: [open.id] });
    log.add({ type: 'hand.lost', hand: 'self_hosted', reason: 'worker w-1 was lost mid-call' });
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    const action = log.decide();
    expect(action.kind).toBe('fail_tools');
    if (action.kind !== 'fail_tools') return;
    expect(action.failures.map((f) => f.call.id)).toEqual([open.id]);
    expect(action.failures[0]!.message).toMatch(/^worker w-1 was lost mid-call\. The call was not re-run/);
    // A later call is not touched by an earlier loss; a hand.lost of another hand touches none.
    log.result(open, { isError: true });
    const later = workerCall(log);
    log.add({ type: 'hand.lost', hand: 'sandbox-1', reason: 'x' });
    expect(foldLog(log.events).lostWorker).toEqual([]);
    expect(foldLog(log.events).awaitingWorker.map((c) => c.id)).toEqual([later.id]);
  });

  it('gives up an open worker call when a new message comes, so the model is never asked with a call unanswered', () => {
    const log = asked();
    const call = workerCall(log);
    log.idle({ type: 'requires_action', event_ids: [call.id] });
    log.user('never mind');
    log.running();
    expect(log.decide()).toMatchObject({ kind: 'cancel_tools', calls: [expect.objectContaining({ id: call.id })] });
  });
});
