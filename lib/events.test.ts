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
import { EVENT_SAMPLES as samples } from '~/lib/testing/event-samples';


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
  'user.define_outcome',
  'span.outcome_evaluation_start',
  'span.outcome_evaluation_ongoing',
  'span.outcome_evaluation_end',
  'system.message',
  'session.updated',
  'session.usage',
  'session.thread_created',
  'session.thread_status_running',
  'session.thread_status_idle',
  'session.thread_status_rescheduled',
  'session.thread_status_terminated',
  'agent.thread_message_sent',
  'agent.thread_message_received',
] as const;
const PADDOCK_TYPES = ['user.file_edit', 'hand.provisioned', 'hand.reattached', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed', 'mcp.tools_listed', 'hand.repository_cloned'] as const;

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
    expect(EVENT_TYPES.filter((t) => t.startsWith('hand.') || t.startsWith('mcp.') || t === 'user.file_edit')).toEqual([...PADDOCK_TYPES]);
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

describe('error text', () => {
  it('names each field once, with its first failed check, and every field that failed', () => {
    const schema = z.object({
      url: z.url({ error: 'must be a URL' }).refine((u) => !u.includes('?'), { message: 'must have no query' }),
      n: z.number(),
    });
    const r = schema.safeParse({ url: 'not a url', n: 'x' });
    expect(r.success).toBe(false);
    const text = describeZodError(r.error!);
    expect(text).toBe('url: must be a URL; n: Invalid input: expected number, received string');
    expect(text.match(/url:/g)).toHaveLength(1);
  });
});
