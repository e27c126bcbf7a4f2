import { describe, expect, it } from 'vitest';
import { type McpServerListing, mcpServersToList, mcpToolsFor } from '~/lib/mcp-tools';
import { type AgentToolParams, AgentToolsParams, normalizeTools } from '~/lib/toolset';

const tools = (p: AgentToolParams[]) => normalizeTools(AgentToolsParams.parse(p));
const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], $schema: 'http://json-schema.org/draft-07/schema#' };
const listing = (server: string, names: string[]): McpServerListing => ({ mcp_server_name: server, tools: names.map((name) => ({ name, description: `${name} tool`, input_schema: schema })) });

describe('MCP tools as the model sees them', () => {
  it('names them mcp__server__tool with per-tool enablement and policy from the toolset (default: ask)', () => {
    const agent = tools([{ type: 'mcp_toolset', mcp_server_name: 'gh', configs: [{ name: 'delete_repo', enabled: false }, { name: 'search', permission_policy: { type: 'always_allow' } }] }]);
    const got = mcpToolsFor(agent, [listing('gh', ['search', 'delete_repo', 'comment'])]);
    expect(got.map((t) => [t.spec.name, t.permission])).toEqual([['mcp__gh__search', 'allow'], ['mcp__gh__comment', 'ask']]);
    expect(got[0]!.spec.input_schema).toEqual({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
  });

  it('leaves out a server the agent no longer names, names the API refuses, and a second tool of one name', () => {
    const agent = tools([
      { type: 'mcp_toolset', mcp_server_name: 'a', default_config: { permission_policy: { type: 'always_allow' } } },
      { type: 'mcp_toolset', mcp_server_name: 'a__b' },
      { type: 'custom', name: 'mcp__a__mine', description: 'mine', input_schema: { type: 'object' } },
    ]);
    const got = mcpToolsFor(agent, [listing('a', ['b__c', 'mine', 'x'.repeat(70)]), listing('a__b', ['c']), listing('other', ['t'])]);
    expect(got.map((t) => t.spec.name)).toEqual(['mcp__a__b__c']);
  });

  it('lists only servers both named by a toolset and declared in mcp_servers', () => {
    const agent = { tools: tools([{ type: 'mcp_toolset', mcp_server_name: 'x' }, { type: 'mcp_toolset', mcp_server_name: 'undeclared' }]), mcp_servers: [{ type: 'url' as const, name: 'x', url: 'https://x.example/mcp' }, { type: 'url' as const, name: 'unused', url: 'https://u.example/mcp' }] };
    expect(mcpServersToList(agent).map((s) => s.name)).toEqual(['x']);
  });
});
