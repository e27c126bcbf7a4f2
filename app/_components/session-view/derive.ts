import type { StoredEvent, StoredEventOf } from '~/lib/events';

export type ToolCall = { use: StoredEventOf<'agent.tool_use'>; result: StoredEventOf<'agent.tool_result'> | StoredEventOf<'user.tool_result'> | null };

export type Item =
  | { kind: 'user'; event: StoredEventOf<'user.message'> }
  | { kind: 'agent'; event: StoredEventOf<'agent.message'> }
  | { kind: 'thinking'; event: StoredEventOf<'agent.thinking'> }
  | { kind: 'tool'; call: ToolCall }
  | { kind: 'interrupt'; event: StoredEventOf<'user.interrupt'> }
  | { kind: 'error'; event: StoredEventOf<'session.error'> }
  | { kind: 'rescheduled'; event: StoredEventOf<'session.status_rescheduled'> };

/** The conversation as a person reads it: messages, and each tool call beside its result. */
export function conversation(events: readonly StoredEvent[]): Item[] {
  const items: Item[] = [];
  const calls = new Map<string, ToolCall>();
  for (const e of events) {
    switch (e.type) {
      case 'user.message':
        items.push({ kind: 'user', event: e });
        break;
      case 'agent.message':
        items.push({ kind: 'agent', event: e });
        break;
      case 'agent.thinking':
        if ((e.content ?? []).length > 0) items.push({ kind: 'thinking', event: e });
        break;
      case 'agent.tool_use': {
        const call: ToolCall = { use: e, result: null };
        calls.set(e.id, call);
        items.push({ kind: 'tool', call });
        break;
      }
      case 'agent.tool_result':
      case 'user.tool_result': {
        const call = calls.get(e.tool_use_id);
        if (call) call.result = e;
        break;
      }
      case 'user.interrupt':
        items.push({ kind: 'interrupt', event: e });
        break;
      case 'session.error':
        items.push({ kind: 'error', event: e });
        break;
      case 'session.status_rescheduled':
        items.push({ kind: 'rescheduled', event: e });
        break;
      default:
        break;
    }
  }
  return items;
}

export type Status = 'idle' | 'running' | 'rescheduling' | 'terminated';

export function currentStatus(events: readonly StoredEvent[]): Status {
  for (let i = events.length - 1; i >= 0; i--) {
    switch (events[i]!.type) {
      case 'session.status_running':
        return 'running';
      case 'session.status_idle':
        return 'idle';
      case 'session.status_rescheduled':
        return 'rescheduling';
      case 'session.status_terminated':
        return 'terminated';
      default:
        continue;
    }
  }
  return 'idle';
}

/** Is a user message waiting for the harness to pick it up? (Shown as "working".) */
export function awaitingAgent(events: readonly StoredEvent[]): boolean {
  const last = events[events.length - 1];
  return last?.type === 'user.message';
}
