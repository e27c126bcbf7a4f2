import type { StoredEvent, StoredEventOf } from '~/lib/events';
import { RETRY_MESSAGE } from '~/app/_components/session-view/error-text';

export type ToolCall = {
  /** A toolset tool's call, or an MCP server's (shown alike, with the server's name). */
  use: StoredEventOf<'agent.tool_use'> | StoredEventOf<'agent.mcp_tool_use'>;
  result: StoredEventOf<'agent.tool_result'> | StoredEventOf<'user.tool_result'> | StoredEventOf<'agent.mcp_tool_result'> | null;
  /** The owner's verdict on a call whose policy asks first (the first one counts). */
  confirmation: StoredEventOf<'user.tool_confirmation'> | null;
};
/** A custom tool's call: the client's program answers it, not Paddock. */
export type CustomCall = { use: StoredEventOf<'agent.custom_tool_use'>; result: StoredEventOf<'user.custom_tool_result'> | null };

/** A call still waiting for the owner to allow or deny it. */
export function awaitsConfirmation(call: ToolCall): boolean {
  return call.use.evaluated_permission === 'ask' && call.confirmation === null && call.result === null;
}

/** A call the owner (or the agent's policy) refused: it never ran, so it did not fail either. */
export function wasDenied(call: ToolCall): boolean {
  return call.confirmation?.result === 'deny' || call.use.evaluated_permission === 'deny';
}

/** Retry's message: sent by Paddock's button, not typed by anyone (shown as Paddock's action). */
function isRetry(e: StoredEventOf<'user.message'>): boolean {
  return e.content.length === 1 && e.content[0]?.type === 'text' && e.content[0].text === RETRY_MESSAGE;
}

export type Item =
  /** `queued`: sent while the session ran a turn, and no model request has taken it up yet. */
  | { kind: 'user'; event: StoredEventOf<'user.message'>; queued: boolean }
  | { kind: 'retry'; event: StoredEventOf<'user.message'> }
  | { kind: 'agent'; event: StoredEventOf<'agent.message'> }
  | { kind: 'thinking'; event: StoredEventOf<'agent.thinking'> }
  /** `askedBy`: in the coordinator's conversation, the child agent whose call this is (cross-posted: it waits for the owner). */
  | { kind: 'tool'; call: ToolCall; askedBy?: string }
  | { kind: 'custom'; call: CustomCall; askedBy?: string }
  | { kind: 'interrupt'; event: StoredEventOf<'user.interrupt'> }
  | { kind: 'error'; event: StoredEventOf<'session.error'> }
  | { kind: 'rescheduled'; event: StoredEventOf<'session.status_rescheduled'> }
  | { kind: 'compacted'; event: StoredEventOf<'agent.thread_context_compacted'> }
  | { kind: 'outcome'; event: StoredEventOf<'user.define_outcome'> }
  /** One evaluation of an outcome: grading while `end` is null, then its verdict. */
  | { kind: 'evaluation'; start: StoredEventOf<'span.outcome_evaluation_start'>; end: StoredEventOf<'span.outcome_evaluation_end'> | null }
  | { kind: 'system'; event: StoredEventOf<'system.message'> }
  /** Multiagent: a message to another thread (a delegation, or a child's report) and one from another thread. */
  | { kind: 'thread-sent'; event: StoredEventOf<'agent.thread_message_sent'> }
  | { kind: 'thread-received'; event: StoredEventOf<'agent.thread_message_received'> };

export interface ConversationOptions {
  /**
   * The coordinator's conversation (multiagent): a call that carries a child's thread id is that
   * child's, cross-posted because it waits for the owner, and is labelled with its agent's name.
   */
  primary?: boolean;
}

/**
 * The conversation as a person reads it: messages, and each tool call beside its result. Queued
 * messages come last; the page draws them below the answer still streaming.
 */
export function conversation(events: readonly StoredEvent[], opts: ConversationOptions = {}): Item[] {
  const items: Item[] = [];
  /** Child threads' agents, from their `session.thread_created` (on the primary stream too). */
  const agentOf = new Map<string, string>();
  const askedBy = (e: { session_thread_id?: string | undefined }): { askedBy?: string } =>
    opts.primary && e.session_thread_id ? { askedBy: agentOf.get(e.session_thread_id) ?? 'another agent' } : {};
  const calls = new Map<string, ToolCall>();
  const customCalls = new Map<string, CustomCall>();
  const evaluations = new Map<string, Extract<Item, { kind: 'evaluation' }>>();
  // A message sent while a turn runs waits for the next model request (which reads it), unless
  // the session stops first (interrupt, idle). It is shown where it was taken up, after the answer
  // that was being written when it was sent, so that answer reads as the reply to what preceded it.
  let running = false;
  let queued: Array<Extract<Item, { kind: 'user' }>> = [];
  const takenUp = () => {
    for (const item of queued) items.push({ ...item, queued: false });
    queued = [];
  };
  for (const e of events) {
    switch (e.type) {
      case 'user.message':
        if (isRetry(e)) items.push({ kind: 'retry', event: e });
        else if (running) queued.push({ kind: 'user', event: e, queued: true });
        else items.push({ kind: 'user', event: e, queued: false });
        break;
      case 'agent.message': {
        // An interrupted answer is stored after the interrupt that cut it: read in the order it was said.
        const before = items.at(-1);
        if (e.interrupted && before?.kind === 'interrupt') items.splice(-1, 0, { kind: 'agent', event: e });
        else items.push({ kind: 'agent', event: e });
        break;
      }
      case 'agent.thinking':
        if ((e.content ?? []).length > 0) items.push({ kind: 'thinking', event: e });
        break;
      case 'agent.tool_use':
      case 'agent.mcp_tool_use': {
        const call: ToolCall = { use: e, result: null, confirmation: null };
        calls.set(e.id, call);
        items.push({ kind: 'tool', call, ...askedBy(e) });
        break;
      }
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'agent.mcp_tool_result': {
        const call = calls.get(e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id);
        if (call) call.result = e;
        break;
      }
      case 'user.tool_confirmation': {
        const call = calls.get(e.tool_use_id);
        if (call && call.confirmation === null) call.confirmation = e;
        break;
      }
      case 'agent.custom_tool_use': {
        const call: CustomCall = { use: e, result: null };
        customCalls.set(e.id, call);
        items.push({ kind: 'custom', call, ...askedBy(e) });
        break;
      }
      case 'user.custom_tool_result': {
        const call = customCalls.get(e.custom_tool_use_id);
        if (call && call.result === null) call.result = e;
        break;
      }
      case 'user.interrupt':
        takenUp();
        items.push({ kind: 'interrupt', event: e });
        break;
      case 'session.error':
        items.push({ kind: 'error', event: e });
        break;
      case 'session.status_rescheduled':
        running = true;
        items.push({ kind: 'rescheduled', event: e });
        break;
      case 'session.status_running':
        running = true;
        break;
      case 'session.status_idle':
      case 'session.status_terminated':
        running = false;
        takenUp();
        break;
      case 'span.model_request_start':
        takenUp();
        break;
      // Not part of the conversation as a person reads it: the timeline and the IDE show them.
      case 'agent.thread_context_compacted':
        items.push({ kind: 'compacted', event: e });
        break;
      case 'user.file_edit':
      case 'span.model_request_end':
      case 'hand.provisioned':
      case 'hand.reattached':
      case 'hand.released':
      case 'hand.lost':
      case 'hand.suspended':
      case 'hand.resumed':
      case 'mcp.tools_listed':
      case 'hand.repository_cloned':
      case 'span.outcome_evaluation_ongoing':
      case 'session.updated':
      case 'session.usage':
        break;
      case 'user.define_outcome':
        // It starts work as a message does: what was queued behind a turn is taken up.
        takenUp();
        items.push({ kind: 'outcome', event: e });
        break;
      case 'span.outcome_evaluation_start': {
        const item = { kind: 'evaluation' as const, start: e, end: null };
        evaluations.set(e.id, item);
        items.push(item);
        break;
      }
      case 'span.outcome_evaluation_end': {
        const item = evaluations.get(e.outcome_evaluation_start_id);
        if (item) item.end = e;
        break;
      }
      case 'system.message':
        items.push({ kind: 'system', event: e });
        break;
      case 'agent.thread_message_sent':
        items.push({ kind: 'thread-sent', event: e });
        break;
      case 'agent.thread_message_received':
        items.push({ kind: 'thread-received', event: e });
        break;
      // The thread list beside the chat shows each thread's life.
      case 'session.thread_created':
        agentOf.set(e.session_thread_id, e.agent_name);
        break;
      case 'session.thread_status_running':
      case 'session.thread_status_idle':
      case 'session.thread_status_rescheduled':
      case 'session.thread_status_terminated':
        break;
      default:
        // Exhaustive at compile time (a new event type has to be placed here or above), yet an
        // event of a newer server that this page does not know is skipped, never a crash.
        e satisfies never;
        break;
    }
  }
  // Still waiting: last, after everything the current turn has said so far.
  return [...items, ...queued];
}

export type Status = 'idle' | 'running' | 'rescheduling' | 'terminated';

export function currentStatus(events: readonly StoredEvent[]): Status {
  // Terminated is final, as the store keeps it: nothing stored after it revives the session.
  if (events.some((e) => e.type === 'session.status_terminated')) return 'terminated';
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
