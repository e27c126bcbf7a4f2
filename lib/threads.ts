import type { EventType, StoredEvent } from '~/lib/events';

/**
 * Session threads (multiagent). A session's log is one log: the primary thread's (the
 * coordinator's) events carry no `session_thread_id`; a child thread's carry its id. A child's
 * id is made from the id of the `send_to_agent` call that spawned it, so a retried spawn names the
 * same thread; the primary's from the session's id.
 */

export function primaryThreadId(sessionId: string): string {
  return `sthr_${sessionId.replace(/^sesn_/, '')}`;
}

/** The thread a `send_to_agent` call spawns (the call's id is `sevt_<ulid>`). */
export function spawnedThreadId(callId: string): string {
  return `sthr_${callId.replace(/^sevt_/, '')}`;
}

/** The thread an event belongs to: null for the primary thread. */
export function threadOf(e: { session_thread_id?: string | undefined }): string | null {
  return e.session_thread_id ?? null;
}

/** A child's events the primary stream shows too: its life, the messages between threads, and what blocks it on the user. */
const CROSS_POSTED = new Set<EventType>([
  'session.thread_created',
  'session.thread_status_running',
  'session.thread_status_idle',
  'session.thread_status_rescheduled',
  'session.thread_status_terminated',
  'agent.thread_message_sent',
  'agent.custom_tool_use',
  'user.tool_confirmation',
  'user.custom_tool_result',
  'user.interrupt',
]);

/**
 * Whether the session's own stream (the primary thread) shows an event: its own, and a child's
 * status, cross-thread messages and blocking events (a call that waits for the user's
 * confirmation, a custom tool call), each once, with its `session_thread_id`. Cross-posting is a
 * view over the one log, never a second write.
 */
export function onPrimaryStream(e: StoredEvent): boolean {
  if (e.session_thread_id === undefined) return true;
  if (CROSS_POSTED.has(e.type)) return true;
  return (e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use') && e.evaluated_permission === 'ask';
}

/** Whether a thread's own stream shows an event (the primary thread's id: the session's stream). */
export function onThreadStream(e: StoredEvent, threadId: string, primaryId: string): boolean {
  if (threadId === primaryId) return onPrimaryStream(e);
  return e.session_thread_id === threadId;
}

/** The delegation tools the primary thread of a session with a roster is offered. */
export const LIST_AGENTS_TOOL_NAME = 'list_agents';
export const SEND_TO_AGENT_TOOL_NAME = 'send_to_agent';
export function isDelegationTool(name: string): boolean {
  return name === LIST_AGENTS_TOOL_NAME || name === SEND_TO_AGENT_TOOL_NAME;
}
