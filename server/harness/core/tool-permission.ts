import type { McpServerListing, McpToolEntry } from '~/lib/mcp-tools';
import { mcpToolsFor } from '~/lib/mcp-tools';
import { ToolError } from '~/lib/hand';
import { type AgentTool, routeTool } from '~/lib/toolset';
import { unreachable } from '~/lib/unreachable';
import type { McpToolUse, ToolUse } from '~/server/harness/core/decide';

/**
 * Fail closed: a call its agent does not let run never runs. decide() holds the calls that ask
 * until confirmed; this catches anything else (an agent changed under a stored call, a forged one).
 * Throws a ToolError, which the step turns into the call's error result.
 */
export function refuseUnallowed(tools: readonly AgentTool[], call: ToolUse): void {
  const route = routeTool(tools, call.name);
  switch (route.kind) {
    case 'toolset':
      if (route.permission === 'allow' || call.evaluated_permission === 'ask') return;
      throw new ToolError(`${call.name} needs the user's approval (permission policy always_ask): the call was not run`);
    case 'custom':
      throw new ToolError(`${call.name} is a custom tool, answered by the client: the call was not run`);
    case 'unknown':
      throw new ToolError(`${call.name} is not a tool this agent has enabled: the call was not run`);
    default:
      unreachable(route);
  }
}

/** The same rule for an MCP call: only a listed, enabled tool, and one that asks only once confirmed. */
export function allowedMcpTool(tools: readonly AgentTool[] | null, listed: readonly McpServerListing[], call: McpToolUse): McpToolEntry {
  const entry = tools ? mcpToolsFor(tools, listed).find((t) => t.server === call.mcp_server_name && t.tool === call.name) : undefined;
  if (!entry) throw new ToolError(`${call.name} is not a tool of MCP server ${call.mcp_server_name} that this agent has enabled: the call was not run`);
  if (entry.permission === 'ask' && call.evaluated_permission !== 'ask') throw new ToolError(`${call.name} needs the user's approval (permission policy always_ask): the call was not run`);
  return entry;
}
