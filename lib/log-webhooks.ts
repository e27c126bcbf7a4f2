import type { NewEvent } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';
import type { WebhookEventType } from '~/lib/webhook-events';

/** A webhook event a log event stands for: its type, and for a thread's, the thread. */
export interface LogWebhook {
  type: WebhookEventType;
  session_thread_id?: string;
}

/**
 * The webhook events one stored log event is reported as (most: none). The store records them in
 * the append's own transaction (`webhook_outbox`), so what the log holds is what is reported, and
 * a harness crash cannot split the two. Exhaustive: a new event type must say whether it is one.
 */
export function logWebhooks(e: NewEvent): LogWebhook[] {
  switch (e.type) {
    // The API names a status change twice: as the status event (`session.status_*`) and as the
    // status the session is now in (`session.running`, `.idled`, `.requires_action`); both are sent.
    case 'session.status_running':
      return [{ type: 'session.status_run_started' }, { type: 'session.running' }];
    case 'session.status_idle':
      // Waiting on the user or a worker (a confirmation, a custom tool, a self-hosted call) is its own
      // status; at its budget a session idles, and the reason is an event of its own too.
      if (e.stop_reason.type === 'requires_action') return [{ type: 'session.status_idled' }, { type: 'session.requires_action' }];
      return e.stop_reason.type === 'budget_reached' ? [{ type: 'session.status_idled' }, { type: 'session.idled' }, { type: 'session.budget_reached' }] : [{ type: 'session.status_idled' }, { type: 'session.idled' }];
    case 'session.status_rescheduled':
      return [{ type: 'session.status_rescheduled' }];
    case 'session.status_terminated':
      return [{ type: 'session.status_terminated' }];
    case 'session.thread_created':
      return [{ type: 'session.thread_created', session_thread_id: e.session_thread_id }];
    case 'session.thread_status_idle':
      return [{ type: 'session.thread_idled', session_thread_id: e.session_thread_id }];
    case 'session.thread_status_terminated':
      return [{ type: 'session.thread_terminated', session_thread_id: e.session_thread_id }];
    case 'span.outcome_evaluation_end':
      return [{ type: 'session.outcome_evaluation_ended' }];
    case 'session.updated':
      return [{ type: 'session.updated' }];
    // The API defines no webhook for a thread that starts running or is rescheduled.
    case 'session.thread_status_running':
    case 'session.thread_status_rescheduled':
    case 'user.message':
    case 'user.interrupt':
    case 'user.tool_confirmation':
    case 'user.tool_result':
    case 'user.custom_tool_result':
    case 'user.file_edit':
    case 'user.define_outcome':
    case 'agent.message':
    case 'agent.thinking':
    case 'agent.tool_use':
    case 'agent.tool_result':
    case 'agent.mcp_tool_use':
    case 'agent.mcp_tool_result':
    case 'agent.custom_tool_use':
    case 'agent.thread_context_compacted':
    case 'agent.thread_message_sent':
    case 'agent.thread_message_received':
    case 'session.usage':
    case 'session.error':
    case 'span.model_request_start':
    case 'span.model_request_end':
    case 'span.outcome_evaluation_start':
    case 'span.outcome_evaluation_ongoing':
    case 'system.message':
    case 'hand.provisioned':
    case 'hand.reattached':
    case 'hand.released':
    case 'hand.lost':
    case 'hand.suspended':
    case 'hand.resumed':
    case 'mcp.tools_listed':
    case 'hand.repository_cloned':
      return [];
    default:
      return unreachable(e);
  }
}
