import type { EventType } from '~/lib/events';

/**
 * Paddock's additions to the Managed Agents event shapes, as served by /v1 (README § API lists
 * them). A client that knows only the SDK's types ignores them; sdk-shapes.test.ts fails on any
 * field that is neither the SDK's nor listed here.
 */
export const EVENT_EXTENSIONS: Partial<Record<EventType | '*', readonly string[]>> = {
  // Where the event sits in the session's log: `seq` orders it and resumes a stream (Last-Event-ID).
  '*': ['seq', 'session_id', 'session_thread_id'],
  // Claude's own tool_use id, to rebuild the Messages API history; the hand that runs the call.
  'agent.tool_use': ['model_tool_use_id', 'hand'],
  'agent.custom_tool_use': ['model_tool_use_id'],
  'agent.mcp_tool_use': ['model_tool_use_id'],
  // The summary a compaction stored, the seq range it stands for, and the model usage it cost.
  'agent.thread_context_compacted': ['summary', 'from_seq', 'to_seq', 'model_usage'],
  'agent.tool_result': ['hand'],
  // An answer cut by an interrupt, kept as far as it streamed (the model sees it too).
  'agent.message': ['interrupted'],
  // Thinking is kept (text and signature) so tool loops can replay it.
  'agent.thinking': ['content'],
  // Which attempt failed and when the next starts.
  'session.status_rescheduled': ['attempt', 'retry_in_ms'],
  'session.thread_status_rescheduled': ['attempt', 'retry_in_ms'],
  // The roster agent a thread runs (or the inline agent's definition), and the thread that spawned it.
  'session.thread_created': ['agent_id', 'parent_thread_id', 'inline_agent'],
  // What was asked (a Claude id, or the offline demo brain), its estimated input, where a context window began; measured latencies.
  'span.model_request_start': ['model', 'estimated_input_tokens', 'window_from_seq'],
  'span.model_request_end': ['ttft_ms', 'duration_ms', 'model_stop_reason'],
};

/** Event types of Paddock's own (hands and IDE edits): not in the SDK, served to every client. */
export const PADDOCK_EVENT_TYPES: ReadonlySet<string> = new Set<EventType>(['user.file_edit', 'hand.provisioned', 'hand.reattached', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed', 'mcp.tools_listed', 'hand.repository_cloned']);
