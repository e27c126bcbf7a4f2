import type {
  BetaManagedAgentsAgentToolResultEvent,
  BetaManagedAgentsSessionEventType,
  BetaManagedAgentsSessionStatusIdleEvent,
} from '@anthropic-ai/sdk/resources/beta/sessions/events';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  EVENT_TYPES,
  EventTypeSchema,
  type EventType,
  type NewEventOf,
  type StoredEvent,
  type StoredEventOf,
  USER_EVENT_TYPES,
  describeZodError,
  parseNewEvent,
  parseStoredEvent,
} from '~/lib/events';

/** One valid payload per event type. A type added to the union without a sample fails to compile. */
const samples: { [T in EventType]: NewEventOf<T> } = {
  'user.message': {
    type: 'user.message',
    content: [
      { type: 'text', text: 'Fix the failing test.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' }, title: 'Notes', context: null },
      { type: 'document', source: { type: 'file', file_id: 'file_123' } },
    ],
  },
  'user.interrupt': { type: 'user.interrupt' },
  'user.tool_confirmation': { type: 'user.tool_confirmation', tool_use_id: 'sevt_01TOOLUSE', result: 'deny', deny_message: 'not on main' },
  'user.tool_result': {
    type: 'user.tool_result',
    tool_use_id: 'sevt_01TOOLUSE',
    content: [{ type: 'text', text: 'ok from the browser hand' }],
    is_error: false,
  },
  'user.custom_tool_result': {
    type: 'user.custom_tool_result',
    custom_tool_use_id: 'sevt_01CUSTOM',
    content: [{ type: 'text', text: '42' }],
    is_error: null,
  },
  'user.file_edit': { type: 'user.file_edit', hand: 'browser-1', path: 'src/index.js', content: 'console.log(1);\n' },
  'agent.message': { type: 'agent.message', content: [{ type: 'text', text: 'Done.' }, { type: 'redacted' }] },
  'agent.thinking': { type: 'agent.thinking', content: [{ type: 'thinking', thinking: 'Let me look.', signature: 'sig-abc' }] },
  'agent.tool_use': {
    type: 'agent.tool_use',
    name: 'bash',
    input: { command: 'npm test', nested: { a: [1, 2, null] } },
    model_tool_use_id: 'toolu_01ABC',
    hand: 'sandbox-1',
  },
  'agent.tool_result': {
    type: 'agent.tool_result',
    tool_use_id: 'sevt_01TOOLUSE',
    content: [
      { type: 'text', text: 'exit 1' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: null },
    ],
    is_error: true,
    hand: 'sandbox-1',
  },
  'agent.mcp_tool_use': {
    type: 'agent.mcp_tool_use',
    name: 'search_issues',
    mcp_server_name: 'github',
    input: { q: 'is:open' },
    model_tool_use_id: 'toolu_01MCP',
  },
  'agent.mcp_tool_result': {
    type: 'agent.mcp_tool_result',
    mcp_tool_use_id: 'sevt_01MCPUSE',
    content: [{ type: 'text', text: '[]' }],
    is_error: false,
  },
  'agent.custom_tool_use': { type: 'agent.custom_tool_use', name: 'lookup_order', input: { order: '1234' }, model_tool_use_id: 'toolu_01CUSTOM' },
  'agent.thread_context_compacted': { type: 'agent.thread_context_compacted' },
  'session.status_running': { type: 'session.status_running' },
  'session.status_idle': { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['sevt_01TOOLUSE'] }, stop_details: null },
  'session.status_rescheduled': { type: 'session.status_rescheduled', attempt: 2, retry_in_ms: 1500 },
  'session.status_terminated': { type: 'session.status_terminated' },
  'session.error': {
    type: 'session.error',
    error: { type: 'model_overloaded_error', message: 'Overloaded', retry_status: { type: 'retrying' } },
  },
  'span.model_request_start': { type: 'span.model_request_start', model: 'claude-sonnet-4-5' },
  'span.model_request_end': {
    type: 'span.model_request_end',
    model_request_start_id: 'sevt_01START',
    is_error: false,
    model_usage: { input_tokens: 1200, output_tokens: 80, cache_creation_input_tokens: 1000, cache_read_input_tokens: 0 },
    ttft_ms: 312.5,
    duration_ms: 2100,
    model_stop_reason: 'tool_use',
  },
  'hand.provisioned': { type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' },
  'hand.released': { type: 'hand.released', hand: 'sandbox-1' },
  'hand.lost': { type: 'hand.lost', hand: 'browser-1', reason: 'no live tab answered within 30s' },
  'hand.reattached': { type: 'hand.reattached', hand: 'remote-2', reattach_ms: 14 },
  'hand.suspended': { type: 'hand.suspended', hand: 'sandbox-1', reason: 'idle' },
  'hand.resumed': { type: 'hand.resumed', hand: 'sandbox-1', resume_ms: 180 },
};

/** The Managed Agents event types DESIGN.md § Events names, and Paddock's own additions. */
const DESIGN_SDK_TYPES = [
  'user.message',
  'user.interrupt',
  'user.tool_confirmation',
  'user.tool_result',
  'user.custom_tool_result',
  'agent.message',
  'agent.thinking',
  'agent.tool_use',
  'agent.tool_result',
  'agent.mcp_tool_use',
  'agent.mcp_tool_result',
  'agent.custom_tool_use',
  'agent.thread_context_compacted',
  'session.status_running',
  'session.status_idle',
  'session.status_rescheduled',
  'session.status_terminated',
  'session.error',
  'span.model_request_start',
  'span.model_request_end',
] as const;
const PADDOCK_TYPES = ['user.file_edit', 'hand.provisioned', 'hand.reattached', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed'] as const;

const roundTrip = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

function stored<T extends EventType>(e: NewEventOf<T>, seq: number): StoredEventOf<T> {
  return {
    ...e,
    id: `sevt_01J9Z3${String(seq).padStart(20, '0')}`,
    session_id: 'sesn_01J9Z3QWERTYASDFGHZXCVBNM0',
    seq,
    processed_at: new Date(Date.UTC(2025, 0, 1, 12, 0, seq)).toISOString(),
  };
}

/** Runs `f`, expects it to throw a ZodError, and returns describeZodError's text for it. */
function zodMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(z.ZodError);
    return describeZodError(e as z.ZodError);
  }
  throw new Error('expected a ZodError, but parsing succeeded');
}

describe('event vocabulary', () => {
  it('has a sample for every event type, and no sample for a type that does not exist', () => {
    expect(Object.keys(samples).sort()).toEqual([...EVENT_TYPES].sort());
    for (const [type, sample] of Object.entries(samples)) expect(sample.type).toBe(type);
  });

  it('covers every Managed Agents type DESIGN.md lists plus the hand lifecycle, and nothing else', () => {
    expect([...EVENT_TYPES].sort()).toEqual([...DESIGN_SDK_TYPES, ...PADDOCK_TYPES].sort());
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
  });

  it('uses only type names the SDK defines, apart from the hand.* additions', () => {
    // Compile-time: every non-hand type is one of the SDK's session event types.
    expectTypeOf<Exclude<EventType, BetaManagedAgentsSessionEventType | (typeof PADDOCK_TYPES)[number]>>().toEqualTypeOf<never>();
    // …and every DESIGN type is one of ours.
    expectTypeOf<Exclude<(typeof DESIGN_SDK_TYPES)[number], EventType>>().toEqualTypeOf<never>();
    expect(EVENT_TYPES.filter((t) => t.startsWith('hand.') || t === 'user.file_edit')).toEqual([...PADDOCK_TYPES]);
  });

  it('lists the user event types as a subset of all event types', () => {
    for (const t of USER_EVENT_TYPES) expect(EVENT_TYPES).toContain(t);
    expect(USER_EVENT_TYPES.every((t) => t.startsWith('user.'))).toBe(true);
  });

  it('accepts every event type name and rejects an unknown one in EventTypeSchema', () => {
    for (const t of EVENT_TYPES) expect(EventTypeSchema.parse(t)).toBe(t);
    expect(EventTypeSchema.safeParse('agent.teleport').success).toBe(false);
  });
});

describe('round trips', () => {
  it.each(EVENT_TYPES)('a %s payload survives JSON and parseNewEvent unchanged', (type) => {
    const x = samples[type];
    expect(parseNewEvent(roundTrip(x))).toEqual(x);
  });

  it.each(EVENT_TYPES)('a stored %s survives JSON and parseStoredEvent unchanged', (type) => {
    const x: StoredEvent = stored(samples[type], EVENT_TYPES.indexOf(type) + 1);
    const parsed = parseStoredEvent(roundTrip(x));
    expect(parsed).toEqual(x);
    expect(parsed.id).toMatch(/^sevt_/);
    expect(parsed.session_id).toMatch(/^sesn_/);
  });

  it('fills stop_details with null when an idle event omits it', () => {
    const parsed = parseNewEvent({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(parsed).toEqual({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
  });

  it('accepts every idle stop reason DESIGN.md names', () => {
    for (const stop_reason of [{ type: 'end_turn' }, { type: 'requires_action', event_ids: ['sevt_1'] }, { type: 'retries_exhausted' }] as const) {
      expect(parseNewEvent(roundTrip({ type: 'session.status_idle', stop_reason, stop_details: null }))).toEqual({
        type: 'session.status_idle',
        stop_reason,
        stop_details: null,
      });
    }
  });

  it('keeps optional fields optional: a minimal tool result and a minimal span start parse', () => {
    expect(parseNewEvent({ type: 'agent.tool_result', tool_use_id: 'sevt_1' })).toEqual({ type: 'agent.tool_result', tool_use_id: 'sevt_1' });
    expect(parseNewEvent({ type: 'span.model_request_start' })).toEqual({ type: 'span.model_request_start' });
  });

  it('drops keys a payload does not define instead of storing them', () => {
    expect(parseNewEvent({ type: 'user.interrupt', smuggled: 'x' })).toEqual({ type: 'user.interrupt' });
  });
});

describe('agreement with the SDK types', () => {
  it('gives agent.tool_result the fields and types of BetaManagedAgentsAgentToolResultEvent', () => {
    const ours = stored(samples['agent.tool_result'], 1);
    // Type-level: a stored agent.tool_result is assignable to the SDK's event (extra fields aside).
    const sdk: BetaManagedAgentsAgentToolResultEvent = ours;
    const picked: Pick<BetaManagedAgentsAgentToolResultEvent, 'tool_use_id' | 'is_error' | 'content'> = samples['agent.tool_result'];
    expectTypeOf(ours.tool_use_id).toEqualTypeOf<BetaManagedAgentsAgentToolResultEvent['tool_use_id']>();
    expect(sdk.tool_use_id).toBe('sevt_01TOOLUSE');
    expect(picked.is_error).toBe(true);
    expect(picked.content?.[0]).toEqual({ type: 'text', text: 'exit 1' });
  });

  it('gives session.status_idle a stop_reason and stop_details the SDK accepts', () => {
    const idle = samples['session.status_idle'];
    const stopReason: BetaManagedAgentsSessionStatusIdleEvent['stop_reason'] = idle.stop_reason;
    const stopDetails: BetaManagedAgentsSessionStatusIdleEvent['stop_details'] = idle.stop_details;
    const sdkIdle: BetaManagedAgentsSessionStatusIdleEvent = stored(idle, 1);
    expect(stopReason.type).toBe('requires_action');
    expect(stopDetails).toBeNull();
    expect(sdkIdle.type).toBe('session.status_idle');
  });
});

describe('malformed events', () => {
  it('names content.0.text when a user.message text block has no text', () => {
    const msg = zodMessage(() => parseNewEvent({ type: 'user.message', content: [{ type: 'text' }] }));
    expect(msg).toContain('content.0.text');
  });

  it('names content when a user.message has no blocks at all', () => {
    const msg = zodMessage(() => parseNewEvent({ type: 'user.message', content: [] }));
    expect(msg).toMatch(/^content: /);
  });

  it('rejects an unknown event type and names type', () => {
    const msg = zodMessage(() => parseNewEvent({ type: 'agent.teleport', name: 'x' }));
    expect(msg).toMatch(/^type: /);
  });

  it('names tool_use_id when an agent.tool_result or user.tool_result lacks it', () => {
    expect(zodMessage(() => parseNewEvent({ type: 'agent.tool_result', content: [{ type: 'text', text: 'x' }] }))).toContain('tool_use_id');
    expect(zodMessage(() => parseNewEvent({ type: 'user.tool_result', tool_use_id: '' }))).toContain('tool_use_id');
  });

  it('names model_tool_use_id when an agent.tool_use lacks Claude’s own id', () => {
    expect(zodMessage(() => parseNewEvent({ type: 'agent.tool_use', name: 'bash', input: {} }))).toContain('model_tool_use_id');
  });

  it('names stop_reason.type for an idle event with an unknown stop reason', () => {
    expect(zodMessage(() => parseNewEvent({ type: 'session.status_idle', stop_reason: { type: 'bored' } }))).toContain('stop_reason.type');
  });

  it('names model_usage.output_tokens for a span end with negative usage', () => {
    const bad = { ...samples['span.model_request_end'], model_usage: { ...samples['span.model_request_end'].model_usage, output_tokens: -1 } };
    expect(zodMessage(() => parseNewEvent(bad))).toContain('model_usage.output_tokens');
  });

  it('says (root) when the input is not an object at all', () => {
    expect(zodMessage(() => parseNewEvent(null))).toMatch(/^\(root\): /);
  });

  it.each([0, -1, 1.5])('rejects a stored event with seq %s and names seq', (seq) => {
    const msg = zodMessage(() => parseStoredEvent({ ...stored(samples['user.interrupt'], 1), seq }));
    expect(msg).toMatch(/^seq: /);
  });

  it('rejects a stored event whose id lacks the sevt_ prefix and names id', () => {
    const msg = zodMessage(() => parseStoredEvent({ ...stored(samples['user.interrupt'], 1), id: 'evt_01J9Z3' }));
    expect(msg).toBe('id: must start with sevt_');
  });

  it('rejects a stored event whose session_id lacks the sesn_ prefix and names session_id', () => {
    const msg = zodMessage(() => parseStoredEvent({ ...stored(samples['user.interrupt'], 1), session_id: 'sess_1' }));
    expect(msg).toBe('session_id: must start with sesn_');
  });

  it('rejects a stored event whose processed_at is not an ISO datetime and names processed_at', () => {
    const msg = zodMessage(() => parseStoredEvent({ ...stored(samples['user.interrupt'], 1), processed_at: 'yesterday' }));
    expect(msg).toMatch(/^processed_at: /);
  });

  it('rejects a stored event whose payload is malformed even when its stored fields are fine', () => {
    const msg = zodMessage(() => parseStoredEvent({ ...stored(samples['agent.tool_result'], 1), tool_use_id: undefined }));
    expect(msg).toContain('tool_use_id');
  });

  it('lists every problem, separated by semicolons', () => {
    const msg = zodMessage(() => parseNewEvent({ type: 'user.message', content: [{ type: 'text' }, { type: 'text', text: 1 }] }));
    expect(msg.split('; ')).toHaveLength(2);
    expect(msg).toContain('content.0.text');
    expect(msg).toContain('content.1.text');
  });
});
