import { describe, expect, it } from 'vitest';
import { type EventType, type NewEventOf, type StoredEvent, type StoredEventOf, parseStoredEvent } from '~/lib/events';
import { awaitsConfirmation, conversation } from '~/app/_components/session-view/derive';

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
});
