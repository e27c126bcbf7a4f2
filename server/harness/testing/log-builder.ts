import { type EventType, type NewEventOf, type StoredEvent, type StoredEventOf, parseStoredEvent } from '~/lib/events';
import { type RequestSettings, type ModelRequest, buildContext } from '~/server/harness/core/context';

export const USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** A log built in memory: seq, id and processed_at assigned like the store does, every event validated. */
export class StoredLog {
  readonly events: StoredEvent[] = [];

  add<T extends EventType>(e: NewEventOf<T>): StoredEventOf<T> {
    const seq = this.events.length + 1;
    const s = {
      ...e,
      id: `sevt_${String(seq).padStart(26, '0')}`,
      session_id: 'sesn_test',
      seq,
      processed_at: new Date(Date.UTC(2025, 0, 1) + seq * 1000).toISOString(),
    };
    parseStoredEvent(s);
    this.events.push(s);
    return s;
  }
}

/** The context builder's fixtures: messages, calls and results, turns wrapped in their spans. */
export class Log extends StoredLog {
  user(...texts: string[]) {
    return this.add({ type: 'user.message', content: texts.map((text) => ({ type: 'text' as const, text })) });
  }
  say(...texts: string[]) {
    return this.add({ type: 'agent.message', content: texts.map((text) => ({ type: 'text' as const, text })) });
  }
  think(thinking: string) {
    return this.add({ type: 'agent.thinking', content: [{ type: 'thinking', thinking, signature: `sig-${thinking}` }] });
  }
  toolUse(toolu: string, name = 'bash', input: Record<string, unknown> = { command: 'ls' }) {
    return this.add({ type: 'agent.tool_use', name, input, model_tool_use_id: toolu, hand: 'sandbox-1' });
  }
  result(call: StoredEvent, text: string, opts: { isError?: boolean | null; by?: 'agent' | 'user' } = {}) {
    const body = { tool_use_id: call.id, content: [{ type: 'text' as const, text }], ...(opts.isError !== undefined ? { is_error: opts.isError } : {}) };
    return opts.by === 'user' ? this.add({ type: 'user.tool_result', ...body }) : this.add({ type: 'agent.tool_result', ...body });
  }
  /** A request's span start; `windowFrom`: where its window began, recorded as the harness does. */
  spanStart(windowFrom: number | null = null) {
    return this.add({ type: 'span.model_request_start', model: 'claude-test', ...(windowFrom !== null ? { window_from_seq: windowFrom } : {}) });
  }
  spanEnd(start: StoredEvent, isError = false) {
    return this.add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: isError, model_usage: USAGE });
  }
  /** A whole model turn, wrapped in its span like the harness writes it. */
  turn(body: () => void, windowFrom: number | null = null) {
    const start = this.spanStart(windowFrom);
    body();
    this.spanEnd(start);
  }
  build(policy: RequestSettings): ModelRequest {
    return buildContext(this.events, policy);
  }
}

