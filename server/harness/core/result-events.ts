import type { NewEvent, ToolResultContent } from '~/lib/events';
import type { ToolUse } from '~/server/harness/core/decide';

/** A call's result event: `agent.mcp_tool_result` for an MCP call, else `agent.tool_result` (on the call's hand). */
export function resultOf(call: ToolUse, content: ToolResultContent[], isError: boolean): NewEvent {
  if (call.type === 'agent.mcp_tool_use') return { type: 'agent.mcp_tool_result', mcp_tool_use_id: call.id, content, is_error: isError };
  return { type: 'agent.tool_result', tool_use_id: call.id, content, ...(isError ? { is_error: true } : {}), ...(call.hand ? { hand: call.hand } : {}) };
}

/** An MCP server that refused the credential, or could not be reached or understood: reported, and the session goes on. */
export function mcpSessionError(kind: 'authentication' | 'connection' | 'protocol', server: string, message: string): NewEvent {
  return {
    type: 'session.error',
    error: { type: kind === 'authentication' ? 'mcp_authentication_failed_error' : 'mcp_connection_failed_error', message, retry_status: { type: 'exhausted' }, mcp_server_name: server },
  };
}
