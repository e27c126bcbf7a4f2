import type { EventType, StoredEvent } from '~/lib/events';
import { threadOf } from '~/lib/threads';
import { foldUsage } from '~/lib/usage';

/** A thread's timing, as the SDK's `BetaManagedAgentsSessionThreadStats` names it. */
export interface ThreadStats {
  active_seconds: number;
  duration_seconds: number;
  startup_seconds: number;
}

/** A thread's token usage, as the SDK's `BetaManagedAgentsSessionThreadUsage` names it. */
export interface ThreadUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  active_seconds: number;
}

/** A thread starts running: the primary's session status, a child's creation or thread status. */
const STARTS = new Set<EventType>(['session.status_running', 'session.status_rescheduled', 'session.thread_created', 'session.thread_status_running', 'session.thread_status_rescheduled']);
const ENDS = new Set<EventType>(['session.status_idle', 'session.status_terminated', 'session.thread_status_idle', 'session.thread_status_terminated']);

/** The events `accountThread` reads: every model request's usage and every status of every thread. */
export const THREAD_ACCOUNTED: EventType[] = ['span.model_request_end', 'span.outcome_evaluation_end', 'agent.thread_context_compacted', ...STARTS, ...ENDS];

/**
 * One thread's stats and usage from the session's one log (pure): its own model requests (the
 * events that carry its `session_thread_id`; the primary's carry none) and its time running, from
 * its status events. As the API: stats are null until the thread's first status, usage until its
 * first idle; a child starts at once (startup 0), the primary when the session first runs; an
 * archived thread's duration stops at its archive.
 */
export function accountThread(
  events: readonly StoredEvent[],
  thread: { id: string | null; created_at: string; archived_at: string | null },
  now: number,
): { stats: ThreadStats | null; usage: ThreadUsage | null } {
  const own = events.filter((e) => threadOf(e) === thread.id);
  const created = Date.parse(thread.created_at);
  let activeMs = 0;
  let runningSince: number | null = null;
  let firstRun: number | null = null;
  let anyStatus = false;
  let idledOnce = false;
  for (const e of own) {
    const at = Date.parse(e.processed_at);
    if (STARTS.has(e.type)) {
      anyStatus = true;
      runningSince ??= at;
      firstRun ??= at;
    } else if (ENDS.has(e.type)) {
      anyStatus = true;
      idledOnce = true;
      if (runningSince !== null) activeMs += at - runningSince;
      runningSince = null;
    }
  }
  if (!anyStatus) return { stats: null, usage: null };
  const end = thread.archived_at !== null ? Date.parse(thread.archived_at) : now;
  if (runningSince !== null) activeMs += Math.max(0, end - runningSince);
  // To the millisecond, as the session's own stats.
  const secs = (ms: number) => Math.max(0, Math.round(ms) / 1000);
  const active_seconds = secs(activeMs);
  const stats: ThreadStats = {
    active_seconds,
    duration_seconds: secs(end - created),
    startup_seconds: thread.id === null && firstRun !== null ? secs(firstRun - created) : 0,
  };
  if (!idledOnce) return { stats, usage: null };
  const t = foldUsage(own);
  return {
    stats,
    usage: {
      input_tokens: t.input_tokens,
      output_tokens: t.output_tokens,
      cache_read_input_tokens: t.cache_read_input_tokens,
      // Paddock writes 5-minute cache entries (as the session's usage says).
      cache_creation: { ephemeral_5m_input_tokens: t.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
      active_seconds,
    },
  };
}
