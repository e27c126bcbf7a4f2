import type { StopReason, StoredEvent, StoredEventOf } from '~/lib/events';

/**
 * The harness's one decision: given the whole log, what is the next step? Pure, so it can be
 * tested exhaustively and so any harness instance, after any crash, decides the same thing.
 */
export type ToolUse = StoredEventOf<'agent.tool_use'>;

export type Action =
  | { kind: 'mark_running' }
  | { kind: 'call_model'; attempt: number }
  | { kind: 'run_tools'; calls: ToolUse[] }
  | { kind: 'cancel_tools'; calls: ToolUse[]; reason: string }
  | { kind: 'go_idle'; stop_reason: StopReason }
  | { kind: 'none' };

export interface LogState {
  status: 'idle' | 'running' | 'rescheduling' | 'terminated';
  needsModel: boolean;
  /** Tool calls without a stored result, in log order. */
  pending: ToolUse[];
  /** Pending calls that were in flight when the user interrupted: they get error results, never run. */
  cancelled: ToolUse[];
  /** A user.interrupt arrived after the last user.message. */
  interrupted: boolean;
  /** Failed model attempts since the last answered turn or user message. */
  failedAttempts: number;
}

export function foldLog(events: readonly StoredEvent[]): LogState {
  let status: LogState['status'] = 'idle';
  let needsModel = false;
  let interrupted = false;
  let failedAttempts = 0;
  const pending = new Map<string, ToolUse>();
  const cancelled = new Set<string>();
  // A turn answers only the input that existed when it started: a message sent while the model
  // was streaming still needs its own turn.
  const turnStarts = new Map<string, number>();
  let lastUserMessageSeq = 0;

  for (const e of events) {
    switch (e.type) {
      case 'user.message':
        lastUserMessageSeq = e.seq;
        needsModel = true;
        interrupted = false;
        failedAttempts = 0;
        break;
      case 'user.interrupt':
        needsModel = false;
        interrupted = true;
        for (const id of pending.keys()) cancelled.add(id);
        break;
      case 'agent.tool_use':
        pending.set(e.id, e);
        // A turn that finished just as the user pressed stop: its calls are never run.
        if (interrupted) cancelled.add(e.id);
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
        cancelled.delete(e.tool_use_id);
        if (pending.delete(e.tool_use_id) && pending.size === 0 && !interrupted) needsModel = true;
        break;
      case 'span.model_request_end':
        if (!e.is_error) {
          needsModel = lastUserMessageSeq > (turnStarts.get(e.model_request_start_id) ?? Infinity);
          failedAttempts = 0;
        }
        break;
      case 'span.model_request_start':
        turnStarts.set(e.id, e.seq);
        break;
      case 'session.status_rescheduled':
        status = 'rescheduling';
        failedAttempts += 1;
        break;
      case 'session.error':
        if (e.error.retry_status.type !== 'retrying') needsModel = false;
        break;
      case 'session.status_running':
        status = 'running';
        break;
      case 'session.status_idle':
        status = 'idle';
        break;
      case 'session.status_terminated':
        status = 'terminated';
        break;
      case 'user.tool_confirmation':
      case 'user.custom_tool_result':
      case 'user.file_edit':
      case 'agent.message':
      case 'agent.thinking':
      case 'agent.mcp_tool_use':
      case 'agent.mcp_tool_result':
      case 'agent.thread_context_compacted':
      case 'hand.provisioned':
      case 'hand.released':
      case 'hand.lost':
      case 'hand.reattached':
      case 'hand.suspended':
      case 'hand.resumed':
        break;
    }
  }
  const calls = [...pending.values()];
  return { status, needsModel, pending: calls, cancelled: calls.filter((c) => cancelled.has(c.id)), interrupted, failedAttempts };
}

export function decide(events: readonly StoredEvent[]): Action {
  const s = foldLog(events);
  if (s.status === 'terminated') return { kind: 'none' };
  if (s.cancelled.length > 0) {
    return { kind: 'cancel_tools', calls: s.cancelled, reason: 'interrupted by the user before the tool finished' };
  }
  const work = s.pending.length > 0 || s.needsModel;
  if (work && s.status !== 'running') return { kind: 'mark_running' };
  if (s.pending.length > 0) return { kind: 'run_tools', calls: s.pending };
  if (s.needsModel) return { kind: 'call_model', attempt: s.failedAttempts + 1 };
  if (s.status !== 'idle') return { kind: 'go_idle', stop_reason: { type: 'end_turn' } };
  return { kind: 'none' };
}
