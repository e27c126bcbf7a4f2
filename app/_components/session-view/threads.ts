import type { StoredEvent } from '~/lib/events';
import { onPrimaryStream } from '~/lib/threads';
import { waitingOnOf } from '~/lib/waiting-on';

/** A session's child thread (multiagent) as the session page lists it. */
export interface ThreadRow {
  id: string;
  agentName: string;
  /** `needs_approval`: idle on a call that waits for the owner's Allow/Deny; `waiting`: on a custom tool's result. */
  status: 'running' | 'idle' | 'needs_approval' | 'waiting' | 'rescheduling' | 'terminated';
  /** When its newest event was stored. */
  lastActivity: string;
}

/** The session's child threads, in the order they were made, each with its latest status and activity. */
export function threadsOf(events: readonly StoredEvent[]): ThreadRow[] {
  const rows = new Map<string, ThreadRow>();
  const calls = new Map<string, StoredEvent>();
  for (const e of events) {
    if (e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use' || e.type === 'agent.custom_tool_use') calls.set(e.id, e);
    if (e.type === 'session.thread_created') {
      rows.set(e.session_thread_id, { id: e.session_thread_id, agentName: e.agent_name, status: 'running', lastActivity: e.processed_at });
      continue;
    }
    const row = e.session_thread_id ? rows.get(e.session_thread_id) : undefined;
    if (!row) continue;
    row.lastActivity = e.processed_at;
    if (e.type === 'session.thread_status_running') row.status = 'running';
    else if (e.type === 'session.thread_status_idle') row.status = e.stop_reason.type !== 'requires_action' ? 'idle' : waitingOnOf(e.stop_reason.event_ids.map((id) => calls.get(id))) === 'approval' ? 'needs_approval' : 'waiting';
    else if (e.type === 'session.thread_status_rescheduled') row.status = 'rescheduling';
    else if (e.type === 'session.thread_status_terminated') row.status = 'terminated';
  }
  return [...rows.values()];
}

/**
 * The events a thread's conversation shows: the primary's (null) is the session's stream, with a
 * child's calls that wait for the owner's verdict (so its Allow/Deny is where the owner looks);
 * a child's, its own.
 */
export function eventsOfThread(events: readonly StoredEvent[], thread: string | null): StoredEvent[] {
  // A child's report shows once in the coordinator's conversation, as received (← its agent); the
  // child's own sent copy (cross-posted on the API's stream) would show it twice.
  if (thread === null) return events.filter((e) => onPrimaryStream(e) && !(e.type === 'agent.thread_message_sent' && e.session_thread_id !== undefined));
  return events.filter((e) => e.session_thread_id === thread);
}
