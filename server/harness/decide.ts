import type { StopReason, StoredEvent, StoredEventOf } from '~/lib/events';

/**
 * The harness's one decision: given the whole log, what is the next step? Pure, so it can be
 * tested exhaustively and so any harness instance, after any crash, decides the same thing.
 */
/** A call the harness runs: a toolset tool's (on a hand, or here), or an MCP server's (through the gateway). */
export type AgentToolUse = StoredEventOf<'agent.tool_use'>;
export type McpToolUse = StoredEventOf<'agent.mcp_tool_use'>;
export type ToolUse = AgentToolUse | McpToolUse;
export type CustomToolUse = StoredEventOf<'agent.custom_tool_use'>;

export type Action =
  | { kind: 'mark_running' }
  | { kind: 'call_model'; attempt: number }
  | { kind: 'run_tools'; calls: ToolUse[] }
  | { kind: 'cancel_tools'; calls: ToolUse[]; reason: string }
  /** Calls the user denied: each gets an error result carrying the user's message, never runs. */
  | { kind: 'deny_tools'; denials: { call: ToolUse; message: string }[] }
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
  /** Pending calls whose policy asks first and that no `user.tool_confirmation` answered yet. */
  awaitingConfirmation: ToolUse[];
  /** Pending calls the user denied (with the message the model is to get). */
  denied: { call: ToolUse; message: string }[];
  /** Custom tool calls the client has not answered yet. */
  awaitingClient: CustomToolUse[];
}

/** What the model is told when the user denies a call without saying why. */
export const DEFAULT_DENY_MESSAGE = 'The user denied this tool call.';

export function foldLog(events: readonly StoredEvent[]): LogState {
  let status: LogState['status'] = 'idle';
  let needsModel = false;
  let interrupted = false;
  let failedAttempts = 0;
  const pending = new Map<string, ToolUse>();
  const cancelled = new Set<string>();
  // Calls whose policy asks first: held until confirmed (then they run) or denied.
  const asking = new Set<string>();
  const denied = new Map<string, string>();
  const custom = new Map<string, CustomToolUse>();
  // A turn answers only the input that existed when it started: a message sent while the model
  // was streaming still needs its own turn.
  const turnStarts = new Map<string, number>();
  let lastUserMessageSeq = 0;
  // The model is asked again once every call of its turn has its answer.
  const answered = () => {
    if (pending.size === 0 && custom.size === 0 && !interrupted) needsModel = true;
  };

  for (const e of events) {
    switch (e.type) {
      case 'user.message':
        lastUserMessageSeq = e.seq;
        needsModel = true;
        interrupted = false;
        failedAttempts = 0;
        // A new message instead of an answer: calls still waiting for the user are given up
        // (an unconfirmed call gets an error result; an unanswered custom call is shown to the
        // model as not answered), so the conversation can go on.
        for (const id of asking) if (!denied.has(id)) cancelled.add(id);
        asking.clear();
        custom.clear();
        break;
      case 'user.interrupt':
        needsModel = false;
        interrupted = true;
        for (const id of pending.keys()) cancelled.add(id);
        asking.clear();
        custom.clear();
        break;
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
        pending.set(e.id, e);
        // A turn that finished just as the user pressed stop: its calls are never run.
        if (interrupted) cancelled.add(e.id);
        else if (e.evaluated_permission === 'ask') asking.add(e.id);
        else if (e.evaluated_permission === 'deny') denied.set(e.id, 'This tool call is not allowed by the agent\'s permission policy.');
        break;
      case 'agent.custom_tool_use':
        if (!interrupted) custom.set(e.id, e);
        break;
      case 'user.tool_confirmation':
        // Only the first verdict on a call that asked counts.
        if (!asking.delete(e.tool_use_id)) break;
        if (e.result === 'deny') denied.set(e.tool_use_id, e.deny_message?.trim() || DEFAULT_DENY_MESSAGE);
        break;
      case 'user.custom_tool_result':
        if (custom.delete(e.custom_tool_use_id)) answered();
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'agent.mcp_tool_result': {
        const id = e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id;
        cancelled.delete(id);
        asking.delete(id);
        denied.delete(id);
        if (pending.delete(id)) answered();
        break;
      }
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
        // An MCP server that failed is reported, and the session goes on without it.
        if (e.error.retry_status.type !== 'retrying' && !e.error.type.startsWith('mcp_')) needsModel = false;
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
      case 'user.file_edit':
      case 'agent.message':
      case 'agent.thinking':
      case 'agent.thread_context_compacted':
      case 'mcp.tools_listed':
      case 'hand.provisioned':
      case 'hand.released':
      case 'hand.lost':
      case 'hand.reattached':
      case 'hand.suspended':
      case 'hand.resumed':
      case 'hand.repository_cloned':
        break;
    }
  }
  const calls = [...pending.values()];
  return {
    status,
    needsModel,
    pending: calls,
    cancelled: calls.filter((c) => cancelled.has(c.id)),
    interrupted,
    failedAttempts,
    awaitingConfirmation: calls.filter((c) => asking.has(c.id)),
    denied: calls.filter((c) => denied.has(c.id) && !cancelled.has(c.id)).map((call) => ({ call, message: denied.get(call.id)! })),
    awaitingClient: [...custom.values()],
  };
}

export function decide(events: readonly StoredEvent[]): Action {
  const s = foldLog(events);
  if (s.status === 'terminated') return { kind: 'none' };
  if (s.cancelled.length > 0) {
    return { kind: 'cancel_tools', calls: s.cancelled, reason: 'interrupted by the user before the tool finished' };
  }
  const waiting = new Set([...s.awaitingConfirmation, ...s.denied.map((d) => d.call)].map((c) => c.id));
  const runnable = s.pending.filter((c) => !waiting.has(c.id));
  const work = runnable.length > 0 || s.denied.length > 0 || s.needsModel;
  if (work && s.status !== 'running') return { kind: 'mark_running' };
  if (s.denied.length > 0) return { kind: 'deny_tools', denials: s.denied };
  if (runnable.length > 0) return { kind: 'run_tools', calls: runnable };
  if (s.needsModel) return { kind: 'call_model', attempt: s.failedAttempts + 1 };
  // Nothing to do until the user answers: idle, saying which calls wait for what.
  const blocked = [...s.awaitingConfirmation, ...s.awaitingClient].map((c) => c.id);
  if (blocked.length > 0) {
    return s.status === 'idle' ? { kind: 'none' } : { kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: blocked } };
  }
  if (s.status !== 'idle') return { kind: 'go_idle', stop_reason: { type: 'end_turn' } };
  return { kind: 'none' };
}
