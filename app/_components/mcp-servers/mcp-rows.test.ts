import { describe, expect, it } from 'vitest';
import { initialMcpRows, mcpParams, newMcpRow } from '~/app/_components/mcp-servers/mcp-rows';
import { probeText } from '~/app/_components/mcp-servers/probe-status';
import type { Agent } from '~/lib/agent';
import { normalizeTools } from '~/lib/toolset';

let n = 0;
const key = () => `k${n++}`;

function agent(partial: Partial<Agent>): Agent {
  return {
    id: 'agent_x', type: 'agent', version: 1, name: 'a', description: null, metadata: {}, model: { id: 'm' }, system: null, tools: [], mcp_servers: [],
    skills: [], execution_identity: null, multiagent: null, created_at: '', updated_at: '', archived_at: null, ...partial,
  };
}

describe('the agent form’s MCP server rows', () => {
  it('reads each server with its toolset: offered or not, and its default permission', () => {
    const a = agent({
      mcp_servers: [{ type: 'url', name: 'docs', url: 'https://docs.example.com/mcp' }, { type: 'url', name: 'off', url: 'https://off.example.com/mcp' }],
      tools: normalizeTools([{ type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_allow' } } }]),
    });
    expect(initialMcpRows(a, key).map(({ name, offered, policy }) => ({ name, offered, policy }))).toEqual([
      { name: 'docs', offered: true, policy: 'always_allow' },
      { name: 'off', offered: false, policy: 'always_ask' },
    ]);
  });

  it('writes a toolset only for offered servers, asking first by default, and keeps per-tool configs', () => {
    const a = agent({
      mcp_servers: [{ type: 'url', name: 'docs', url: 'https://docs.example.com/mcp' }],
      tools: normalizeTools([{ type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'search', enabled: false }] }]),
    });
    const rows = [...initialMcpRows(a, key), { ...newMcpRow(key()), name: ' new ', url: ' https://new.example.com/mcp ' }, { ...newMcpRow(key()), name: 'quiet', url: 'https://q.example.com/mcp', offered: false }];
    const p = mcpParams(a, rows);
    expect(p.mcp_servers).toEqual([
      { type: 'url', name: 'docs', url: 'https://docs.example.com/mcp' },
      { type: 'url', name: 'new', url: 'https://new.example.com/mcp' },
      { type: 'url', name: 'quiet', url: 'https://q.example.com/mcp' },
    ]);
    expect(p.toolsets).toEqual([
      { type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { enabled: true, permission_policy: { type: 'always_ask' } }, configs: [{ name: 'search', enabled: false, permission_policy: { type: 'always_ask' } }] },
      { type: 'mcp_toolset', mcp_server_name: 'new', default_config: { enabled: true, permission_policy: { type: 'always_ask' } } },
    ]);
  });

  it('drops the toolset of a removed server', () => {
    const a = agent({ mcp_servers: [{ type: 'url', name: 'docs', url: 'https://docs.example.com/mcp' }], tools: normalizeTools([{ type: 'mcp_toolset', mcp_server_name: 'docs' }]) });
    expect(mcpParams(a, [])).toEqual({ mcp_servers: [], toolsets: [] });
  });

  it('says what Test connection found in plain words', () => {
    expect(probeText({ status: 'ok', tools: ['a', 'b', 'c', 'd', 'e', 'f'] })).toBe('6 tools: a, b, c, d, e…');
    expect(probeText({ status: 'ok', tools: ['echo'] })).toBe('1 tool: echo');
    expect(probeText({ status: 'unauthorized', message: 'x' })).toBe('The server refused the credential: add one in Settings → Vaults');
    expect(probeText({ status: 'unreachable', message: 'MCP server "h" could not be reached' })).toBe('MCP server "h" could not be reached');
  });
});
