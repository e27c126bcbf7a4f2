import type { Agent, McpServer } from '~/lib/agent';
import type { AgentToolParams, McpToolset } from '~/lib/toolset';

export type McpPolicy = 'always_ask' | 'always_allow';

/** One MCP server as the agent form edits it. */
export interface McpRow {
  key: string;
  name: string;
  url: string;
  /** Its tools are offered to the model (an `mcp_toolset` for it). */
  offered: boolean;
  /** The toolset's default permission: ask first unless the owner says otherwise. */
  policy: McpPolicy;
  /** The stored toolset, so per-tool settings made through the API survive a save. */
  stored: McpToolset | null;
}

export function newMcpRow(key: string): McpRow {
  return { key, name: '', url: '', offered: true, policy: 'always_ask', stored: null };
}

/** The agent's servers as rows, each with its toolset's settings (none: not offered). */
export function initialMcpRows(agent: Agent | null, key: () => string): McpRow[] {
  return (agent?.mcp_servers ?? []).map((s) => {
    const t = agent?.tools.find((x): x is McpToolset => x.type === 'mcp_toolset' && x.mcp_server_name === s.name) ?? null;
    return { key: key(), name: s.name, url: s.url, offered: t !== null && t.default_config.enabled, policy: t?.default_config.permission_policy.type === 'always_allow' ? 'always_allow' : 'always_ask', stored: t };
  });
}

/**
 * The agent's `mcp_servers` and MCP toolsets from the rows: a toolset for each offered server
 * (its per-tool configs kept), none for the others. Toolsets naming a server the form does not
 * show (set through the API) are kept as they are.
 */
export function mcpParams(agent: Agent | null, rows: readonly McpRow[]): { mcp_servers: McpServer[]; toolsets: AgentToolParams[] } {
  const names = new Set(rows.map((r) => r.name.trim()));
  const formerNames = new Set((agent?.mcp_servers ?? []).map((s) => s.name));
  const kept = (agent?.tools ?? []).filter((t): t is McpToolset => t.type === 'mcp_toolset' && !names.has(t.mcp_server_name) && !formerNames.has(t.mcp_server_name));
  const made = rows
    .filter((r) => r.offered)
    .map(
      (r): AgentToolParams => ({
        type: 'mcp_toolset',
        mcp_server_name: r.name.trim(),
        default_config: { enabled: true, permission_policy: { type: r.policy } },
        ...(r.stored && r.stored.configs.length > 0 ? { configs: r.stored.configs } : {}),
      }),
    );
  return { mcp_servers: rows.map((r) => ({ type: 'url', name: r.name.trim(), url: r.url.trim() })), toolsets: [...made, ...kept] };
}
