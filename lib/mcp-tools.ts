import type { McpServer } from '~/lib/agent';
import type { McpServerListing } from '~/lib/mcp-listing';
import type { ToolSpec } from '~/lib/hand';
import type { AgentTool, McpToolset } from '~/lib/toolset';

/**
 * MCP tools as the model sees them: `mcp__<server>__<tool>`, from the list fetched once per
 * session and stored in the log (`mcp.tools_listed`, whose schema is in mcp-listing.ts), so every
 * wake builds the same definitions.
 */
export { McpListedTool, McpServerListing } from '~/lib/mcp-listing';

/** A tool name the Messages API accepts. */
const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

function toolsetOf(tools: readonly AgentTool[], server: string): McpToolset | undefined {
  return tools.find((t): t is McpToolset => t.type === 'mcp_toolset' && t.mcp_server_name === server);
}

/** The servers a session lists: named by an `mcp_toolset` of its agent and declared in its `mcp_servers`, in toolset order. */
export function mcpServersToList(agent: { tools: readonly AgentTool[]; mcp_servers: readonly McpServer[] }): McpServer[] {
  const out: McpServer[] = [];
  for (const t of agent.tools) {
    if (t.type !== 'mcp_toolset') continue;
    const server = agent.mcp_servers.find((s) => s.name === t.mcp_server_name);
    if (server && !out.includes(server)) out.push(server);
  }
  return out;
}

/** One MCP tool under an agent: enabled or not, and whether its calls ask first (`auto` asks too, as for the toolset). */
export function mcpToolPolicy(tools: readonly AgentTool[], server: string, tool: string): { enabled: boolean; permission: 'allow' | 'ask' } {
  const set = toolsetOf(tools, server);
  if (!set) return { enabled: false, permission: 'ask' };
  const c = set.configs.find((x) => x.name === tool) ?? set.default_config;
  return { enabled: c.enabled, permission: c.permission_policy.type === 'always_allow' ? 'allow' : 'ask' };
}

export interface McpToolEntry {
  server: string;
  tool: string;
  spec: ToolSpec;
  permission: 'allow' | 'ask';
}

/**
 * The enabled MCP tools of a session, in listing order: only servers the agent still names, and
 * only names the Messages API accepts (a tool whose full name is too long is left out).
 */
export function mcpToolsFor(tools: readonly AgentTool[], listed: readonly McpServerListing[]): McpToolEntry[] {
  const out: McpToolEntry[] = [];
  // One tool per name: a custom tool keeps its name, and of two listings giving one full name
  // (server `a` tool `b__c`, server `a__b` tool `c`) the first wins.
  const taken = new Set(tools.filter((t) => t.type === 'custom').map((t) => t.name));
  for (const srv of listed) {
    if (!toolsetOf(tools, srv.mcp_server_name)) continue;
    for (const t of srv.tools) {
      const name = mcpToolName(srv.mcp_server_name, t.name);
      const policy = mcpToolPolicy(tools, srv.mcp_server_name, t.name);
      if (!policy.enabled || !API_TOOL_NAME.test(name) || taken.has(name)) continue;
      taken.add(name);
      // `$schema` is the MCP server's annotation, not part of the tool: left out.
      const { $schema: _, type: __, properties, required, ...rest } = t.input_schema;
      const input_schema: ToolSpec['input_schema'] = {
        ...rest,
        type: 'object',
        properties: properties && typeof properties === 'object' ? (properties as Record<string, unknown>) : {},
        ...(Array.isArray(required) ? { required: required as string[] } : {}),
      };
      out.push({ server: srv.mcp_server_name, tool: t.name, spec: { name, description: t.description, input_schema }, permission: policy.permission });
    }
  }
  return out;
}
