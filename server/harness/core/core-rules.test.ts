import { describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { ToolError } from '~/lib/hand';
import { normalizeTools } from '~/lib/toolset';
import type { ToolUse } from '~/server/harness/core/decide';
import type { ModelTurn } from '~/server/harness/core/model-client';
import { afterModelFailure } from '~/server/harness/core/retry-policy';
import { refuseUnallowed } from '~/server/harness/core/tool-permission';
import { turnEvents } from '~/server/harness/core/turn-events';

const end: NewEvent = { type: 'span.model_request_end', model_request_start_id: 'sevt_start', is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const turn = (...content: ModelTurn['content']): ModelTurn => ({ content, stopReason: 'end_turn', usage, ttftMs: 5 });
const asking = normalizeTools([{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }, { type: 'custom', name: 'ticket', description: 'd', input_schema: { type: 'object' } }]);
const routing = { tools: asking, mcpTools: new Map(), recall: false, currentHand: 'sandbox-1', messageId: 'sevt_msg', thinkingId: 'sevt_think' };

describe('turn → events (core/turn-events)', () => {
  it.each([
    ['a text answer', turn({ type: 'text', text: 'hi' }), ['agent.message', 'span.model_request_end'], [{ type: 'agent.message', content: [{ type: 'text', text: 'hi' }] }]],
    ['an empty text is not stored', turn({ type: 'text', text: '' }), ['span.model_request_end'], []],
    ['a call that asks, addressed to the current hand', turn({ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }), ['agent.tool_use', 'span.model_request_end'], [{ type: 'agent.tool_use', name: 'bash', hand: 'sandbox-1', evaluated_permission: 'ask' }]],
    ['an allowed call naming its hand', turn({ type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'a', hand: 'browser-1' } }), ['agent.tool_use', 'span.model_request_end'], [{ type: 'agent.tool_use', name: 'read', hand: 'browser-1', evaluated_permission: 'allow' }]],
    ['a custom tool call for the client', turn({ type: 'tool_use', id: 'toolu_3', name: 'ticket', input: {} }), ['agent.custom_tool_use', 'span.model_request_end'], [{ type: 'agent.custom_tool_use', name: 'ticket' }]],
    ['a tool the agent has not enabled is denied', turn({ type: 'tool_use', id: 'toolu_4', name: 'nope', input: {} }), ['agent.tool_use', 'span.model_request_end'], [{ type: 'agent.tool_use', name: 'nope', evaluated_permission: 'deny' }]],
    ['web_fetch is never addressed to a hand', turn({ type: 'tool_use', id: 'toolu_5', name: 'web_fetch', input: { url: 'https://x.test', hand: 'browser-1' } }), ['agent.tool_use', 'span.model_request_end'], [{ type: 'agent.tool_use', name: 'web_fetch' }]],
  ] as const)('%s', (_what, t, types, shapes) => {
    const { events, ids } = turnEvents(t, routing, end);
    expect(events.map((e) => e.type)).toEqual(types);
    shapes.forEach((shape, i) => expect(events[i]).toMatchObject(shape));
    if (events[0]?.type === 'agent.tool_use' && events[0].name === 'web_fetch') expect(events[0]).not.toHaveProperty('hand');
    expect(ids).toEqual(events.map((e) => (e.type === 'agent.message' ? 'sevt_msg' : undefined)));
  });

  it('keeps thinking, then text, then calls, then the end, in that order', () => {
    const t = turn({ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } }, { type: 'text', text: 'reading' }, { type: 'thinking', thinking: 'hm', signature: 's' });
    const { events, ids } = turnEvents(t, routing, end);
    expect(events.map((e) => e.type)).toEqual(['agent.thinking', 'agent.message', 'agent.tool_use', 'span.model_request_end']);
    expect(ids.slice(0, 2)).toEqual(['sevt_think', 'sevt_msg']);
  });
});

describe('the tool permission check (core/tool-permission)', () => {
  const call = (name: string, evaluated_permission?: 'allow' | 'ask' | 'deny') => ({ type: 'agent.tool_use', name, input: {}, ...(evaluated_permission ? { evaluated_permission } : {}) }) as unknown as ToolUse;
  it.each([
    ['an allowed toolset call', call('read'), null],
    ['a call that asks, once confirmed', call('bash', 'ask'), null],
    ['a call that asks, stored as allowed (an agent changed under it)', call('bash', 'allow'), /needs the user's approval/],
    ['a custom tool', call('ticket'), /custom tool, answered by the client/],
    ['a tool not enabled', call('nope'), /not a tool this agent has enabled/],
  ] as const)('%s', (_what, c, refusal) => {
    if (refusal === null) expect(() => refuseUnallowed(asking, c)).not.toThrow();
    else {
      expect(() => refuseUnallowed(asking, c)).toThrow(ToolError);
      expect(() => refuseUnallowed(asking, c)).toThrow(refusal);
    }
  });
});

describe('the model retry policy (core/retry-policy)', () => {
  const failure = (retryable: boolean) => ({ errorType: 'model_overloaded_error' as const, message: 'busy', retryable });
  it.each([
    ['a retryable failure on the first attempt is rescheduled after ~base', failure(true), 1, ['span.model_request_end', 'session.status_rescheduled'], 500],
    ['the back-off doubles each attempt', failure(true), 3, ['span.model_request_end', 'session.status_rescheduled'], 2000],
    ['past the last retry the session gives up: error, then idle', failure(true), 5, ['span.model_request_end', 'session.error', 'session.status_idle'], null],
    ['a failure not worth retrying gives up at once', failure(false), 1, ['span.model_request_end', 'session.error', 'session.status_idle'], null],
  ] as const)('%s', (_what, e, attempt, types, delay) => {
    const out = afterModelFailure(e, attempt, end, { maxRetries: 4, baseMs: 500 }, () => 0.5);
    expect(out.events.map((x) => x.type)).toEqual(types);
    expect(out.retryInMs).toBe(delay);
    const error = out.events.find((x): x is Extract<StoredEvent, { type: 'session.error' }> => x.type === 'session.error');
    if (error) expect(error.error.retry_status.type).toBe(e.retryable ? 'exhausted' : 'terminal');
  });

  it('never waits more than 30 s', () => {
    expect(afterModelFailure(failure(true), 4, end, { maxRetries: 10, baseMs: 20_000 }, () => 1).retryInMs).toBe(30_000);
  });
});
