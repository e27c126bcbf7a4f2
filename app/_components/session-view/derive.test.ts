import { describe, expect, it } from 'vitest';
import { type EventType, type NewEventOf, type StoredEvent, type StoredEventOf, parseStoredEvent } from '~/lib/events';
import { awaitsConfirmation, conversation, currentStatus, wasDenied } from '~/app/_components/session-view/derive';
import { RETRY_MESSAGE } from '~/app/_components/session-view/error-text';

/** A log built like the store would store it (validated, contiguous seq). */
function log() {
  const events: StoredEvent[] = [];
  const add = <T extends EventType>(e: NewEventOf<T>): StoredEventOf<T> => {
    const seq = events.length + 1;
    const s = { ...e, id: `sevt_${String(seq).padStart(26, '0')}`, session_id: 'sesn_test', seq, processed_at: new Date(0).toISOString() };
    parseStoredEvent(s);
    events.push(s);
    return s;
  };
  return { events, add };
}

describe('conversation', () => {
  it('shows an outcome, then each evaluation grading and then with its verdict and explanation', () => {
    const { events, add } = log();
    add({ type: 'user.define_outcome', outcome_id: 'outc_1', description: 'A haiku', rubric: { type: 'text', content: '5-7-5' }, max_iterations: 3 });
    add({ type: 'agent.message', content: [{ type: 'text', text: 'draft' }] });
    const start = add({ type: 'span.outcome_evaluation_start', outcome_id: 'outc_1', iteration: 0 });
    add({ type: 'span.outcome_evaluation_ongoing', outcome_id: 'outc_1', iteration: 0 });
    expect(conversation(events).map((i) => i.kind)).toEqual(['outcome', 'agent', 'evaluation']);
    expect(conversation(events)[2]).toMatchObject({ kind: 'evaluation', end: null });
    const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    add({ type: 'span.outcome_evaluation_end', outcome_evaluation_start_id: start.id, outcome_id: 'outc_1', iteration: 0, result: 'needs_revision', explanation: 'too long', usage });
    expect(conversation(events)[2]).toMatchObject({ kind: 'evaluation', end: { result: 'needs_revision', explanation: 'too long' } });
  });

  it('keeps a call that asks waiting until its first verdict, which it then carries', () => {
    const { events, add } = log();
    const use = add({ type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' });
    const waiting = conversation(events)[0]!;
    expect(waiting.kind === 'tool' && awaitsConfirmation(waiting.call)).toBe(true);

    add({ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny', deny_message: 'no' });
    add({ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' });
    const answered = conversation(events)[0]!;
    expect(answered.kind === 'tool' && awaitsConfirmation(answered.call)).toBe(false);
    expect(answered).toMatchObject({ kind: 'tool', call: { confirmation: { result: 'deny', deny_message: 'no' } } });
  });

  it('does not ask about a call its policy let run, or one that already has a result', () => {
    const { events, add } = log();
    add({ type: 'agent.tool_use', name: 'read', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'allow' });
    const asked = add({ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_2', evaluated_permission: 'ask' });
    add({ type: 'agent.tool_result', tool_use_id: asked.id, is_error: true, content: [{ type: 'text', text: 'given up' }] });
    expect(conversation(events).map((i) => i.kind === 'tool' && awaitsConfirmation(i.call))).toEqual([false, false]);
  });

  it('shows a custom tool call waiting for the client, then with its result', () => {
    const { events, add } = log();
    const use = add({ type: 'agent.custom_tool_use', name: 'lookup', input: { q: 'x' }, model_tool_use_id: 'toolu_1' });
    expect(conversation(events)).toMatchObject([{ kind: 'custom', call: { use: { name: 'lookup' }, result: null } }]);
    add({ type: 'user.custom_tool_result', custom_tool_use_id: use.id, content: [{ type: 'text', text: '42' }] });
    expect(conversation(events)).toMatchObject([{ kind: 'custom', call: { result: { content: [{ type: 'text', text: '42' }] } } }]);
  });

  it('shows a compaction where it happened, with the range it summarized', () => {
    const { events, add } = log();
    add({ type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    add({ type: 'agent.thread_context_compacted', summary: 'all so far', from_seq: 1, to_seq: 1 });
    add({ type: 'agent.message', content: [{ type: 'text', text: 'going on' }] });
    expect(conversation(events).map((i) => i.kind)).toEqual(['user', 'compacted', 'agent']);
    expect(conversation(events)[1]).toMatchObject({ event: { summary: 'all so far', to_seq: 1 } });
  });
});

describe('queued messages', () => {
  const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const say = (text: string) => ({ type: 'user.message' as const, content: [{ type: 'text' as const, text }] });
  const queuedOf = (events: StoredEvent[]) =>
    conversation(events).flatMap((i) => (i.kind === 'user' ? [[i.event.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), i.queued]] : []));

  it('marks a message sent during a turn queued until the next model request takes it up', () => {
    const { events, add } = log();
    add(say('first'));
    add({ type: 'session.status_running' });
    const start = add({ type: 'span.model_request_start' });
    add(say('second'));
    expect(queuedOf(events)).toEqual([
      ['first', false],
      ['second', true],
    ]);

    // The turn that was running ends: still queued, the model has not read it yet.
    add({ type: 'agent.message', content: [{ type: 'text', text: 'answer' }] });
    add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: usage });
    expect(queuedOf(events)[1]).toEqual(['second', true]);

    add({ type: 'span.model_request_start' });
    expect(queuedOf(events)).toEqual([
      ['first', false],
      ['second', false],
    ]);
  });

  it('shows a queued message last, then after the answer it arrived during, never above it', () => {
    const { events, add } = log();
    add(say('first'));
    add({ type: 'session.status_running' });
    const start = add({ type: 'span.model_request_start' });
    add(say('second'));
    add({ type: 'agent.message', content: [{ type: 'text', text: 'answer' }] });
    expect(conversation(events).map((i) => i.kind)).toEqual(['user', 'agent', 'user']);
    add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: usage });
    add({ type: 'span.model_request_start' });
    add({ type: 'agent.message', content: [{ type: 'text', text: 'second answer' }] });
    expect(conversation(events).map((i) => (i.kind === 'user' ? `user ${i.queued}` : i.kind))).toEqual(['user false', 'agent', 'user false', 'agent']);
  });

  it('does not queue a message sent to an idle session, which starts a turn of its own', () => {
    const { events, add } = log();
    add(say('hello'));
    expect(queuedOf(events)).toEqual([['hello', false]]);
    add({ type: 'session.status_running' });
    add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    add(say('again'));
    expect(queuedOf(events)).toEqual([
      ['hello', false],
      ['again', false],
    ]);
  });

  it('stops showing a message as queued once the session stops without taking it up', () => {
    const { events, add } = log();
    add(say('go'));
    add({ type: 'session.status_running' });
    add({ type: 'span.model_request_start' });
    add(say('while busy'));
    add({ type: 'user.interrupt' });
    expect(queuedOf(events)[1]).toEqual(['while busy', false]);

    const other = log();
    other.add({ type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 500 });
    other.add(say('during a retry'));
    expect(queuedOf(other.events)).toEqual([['during a retry', true]]);
    other.add({ type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' }, stop_details: null });
    expect(queuedOf(other.events)).toEqual([['during a retry', false]]);
  });
});

describe('MCP calls in the conversation', () => {
  it('shows an MCP call as a tool call with its result, waiting for approval under always_ask', () => {
    const at = (seq: number) => ({ id: `sevt_${seq}`, session_id: 'sesn_x', seq, processed_at: new Date(0).toISOString() });
    const use = { ...at(1), type: 'agent.mcp_tool_use' as const, name: 'echo', mcp_server_name: 'everything', input: { message: 'hi' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' as const };
    const waiting = conversation([use]);
    expect(waiting).toEqual([{ kind: 'tool', call: { use, result: null, confirmation: null } }]);
    expect(awaitsConfirmation((waiting[0] as Extract<(typeof waiting)[0], { kind: 'tool' }>).call)).toBe(true);
    const result = { ...at(2), type: 'agent.mcp_tool_result' as const, mcp_tool_use_id: use.id, content: [{ type: 'text' as const, text: 'Echo: hi' }], is_error: false };
    const done = conversation([use, result]);
    expect(done).toEqual([{ kind: 'tool', call: { use, result, confirmation: null } }]);
    expect(awaitsConfirmation((done[0] as Extract<(typeof done)[0], { kind: 'tool' }>).call)).toBe(false);
  });
});

describe('the status pill', () => {
  it('shows terminated once the log ends the session, whatever status is stored after it', () => {
    const l = log();
    l.add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    expect(currentStatus(l.events)).toBe('idle');
    l.add({ type: 'session.status_terminated' });
    expect(currentStatus(l.events)).toBe('terminated');
    // A harness that raced the end stores its own status after it: the session stays ended.
    l.add({ type: 'session.status_running' });
    expect(currentStatus(l.events)).toBe('terminated');
  });
});

describe('conversation: states that tell the truth', () => {
  it.each([
    ['denied by the owner', 'ask', 'deny', true],
    ['allowed by the owner, then failed', 'ask', 'allow', false],
    ['refused by the agent policy', 'deny', null, true],
    ['run by the policy', 'allow', null, false],
  ] as const)('a call %s is denied: %s', (_, permission, verdict, denied) => {
    const { events, add } = log();
    const use = add({ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: permission });
    if (verdict) add({ type: 'user.tool_confirmation', tool_use_id: use.id, result: verdict, ...(verdict === 'deny' ? { deny_message: 'not now' } : {}) });
    add({ type: 'agent.tool_result', tool_use_id: use.id, is_error: true, content: [{ type: 'text', text: 'x' }] });
    const item = conversation(events)[0]!;
    expect(item.kind === 'tool' && wasDenied(item.call)).toBe(denied);
  });

  it("shows Retry's message as Paddock's action, and a message the user typed as theirs", () => {
    const { events, add } = log();
    add({ type: 'user.message', content: [{ type: 'text', text: RETRY_MESSAGE }] });
    add({ type: 'user.message', content: [{ type: 'text', text: `${RETRY_MESSAGE} And also fix the tests.` }] });
    expect(conversation(events).map((i) => i.kind)).toEqual(['retry', 'user']);
  });

  it('puts an interrupted answer before the interrupt that cut it, marked interrupted', () => {
    const { events, add } = log();
    add({ type: 'user.message', content: [{ type: 'text', text: 'count' }] });
    add({ type: 'session.status_running' });
    add({ type: 'span.model_request_start' });
    add({ type: 'user.interrupt' });
    add({ type: 'agent.message', content: [{ type: 'text', text: '1, 2, ' }], interrupted: true });
    const items = conversation(events);
    expect(items.map((i) => i.kind)).toEqual(['user', 'agent', 'interrupt']);
    expect(items[1]).toMatchObject({ event: { interrupted: true } });
  });
});
