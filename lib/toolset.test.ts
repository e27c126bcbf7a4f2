import { describe, expect, it } from 'vitest';
import { describeZodError } from '~/lib/events';
import { type AgentToolParams, AgentToolsParams, normalizeTools } from '~/lib/toolset';

type Tools = AgentToolParams[];
const fetchTool = (config: Record<string, unknown>, more: Tools = []): Tools => [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', ...config }] }, ...more];

/** Why the tools are refused ('' when they are not). */
function refusal(tools: Tools): string {
  const r = AgentToolsParams.safeParse(tools);
  return r.success ? '' : describeZodError(r.error);
}

describe("web_fetch's config params", () => {
  it('refuses allowed_domains and blocked_domains together, naming both', () => {
    expect(refusal(fetchTool({ allowed_domains: ['a.example'], blocked_domains: ['b.example'] }))).toMatch(/allowed_domains and blocked_domains cannot be combined/);
  });

  it('refuses an empty domain list, more than 64 entries, and entries that are not plain hostnames', () => {
    expect(refusal(fetchTool({ allowed_domains: [] }))).toMatch(/0\.configs\.0\.allowed_domains: an empty list is rejected: omit the field instead/);
    expect(refusal(fetchTool({ blocked_domains: [] }))).toMatch(/blocked_domains: an empty list is rejected/);
    expect(refusal(fetchTool({ allowed_domains: Array.from({ length: 65 }, (_, i) => `d${i}.example`) }))).toMatch(/at most 64 entries/);
    for (const bad of ['https://a.example', 'a.example:443', 'a.example/docs', '*.a.example', '']) {
      expect(refusal(fetchTool({ allowed_domains: [bad] }))).toMatch(/must be a plain hostname/);
    }
    expect(refusal(fetchTool({ allowed_domains: ['docs.example.com', 'example.org'] }))).toBe('');
  });

  it('stores url_sources in the object form, shorthand expanded and keys not set as null', () => {
    const [toolset] = normalizeTools(AgentToolsParams.parse(fetchTool({ url_sources: { user_input: 'none', server_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'web_fetch' }] } } })));
    expect(toolset).toMatchObject({
      configs: [{ name: 'web_fetch', max_content_tokens: null, url_sources: { user_input: { type: 'none' }, client_tool_results: null, server_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'web_fetch' }] } } }],
    });
    const [plain] = normalizeTools(AgentToolsParams.parse(fetchTool({ enabled: true })));
    expect(plain).toMatchObject({ configs: [{ name: 'web_fetch', enabled: true, url_sources: null }] });
  });

  it('refuses url_sources that would allow nothing, or name tools that are not there', () => {
    expect(refusal(fetchTool({ url_sources: { user_input: 'none', client_tool_results: 'none', server_tool_results: { type: 'none' } } }))).toMatch(/every source is "none"/);
    expect(refusal(fetchTool({ url_sources: { server_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'bash' }] } } }))).toMatch(/server_tool_results\.tools\.0\.name: must be web_search or web_fetch/);
    expect(refusal(fetchTool({ url_sources: { client_tool_results: { type: 'except', tools: [] } } }))).toMatch(/an empty list is rejected/);
    expect(refusal(fetchTool({ url_sources: { client_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'lookup' }] } } }))).toMatch(/lookup is not a custom tool of this agent/);
    const lookup = { type: 'custom' as const, name: 'lookup', description: 'd', input_schema: { type: 'object' as const } };
    expect(refusal(fetchTool({ url_sources: { client_tool_results: { type: 'only', tools: [{ type: 'tool_reference', name: 'lookup' }] } } }, [lookup]))).toBe('');
    expect(refusal([{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', url_sources: { user_input: 'all' } }] }] as Tools)).toMatch(/url_sources is a setting of web_fetch only/);
  });

  it('accepts a stored config sent back as params (the agent form round-trips it)', () => {
    const stored = normalizeTools(AgentToolsParams.parse(fetchTool({ allowed_domains: ['docs.example.com'], max_content_tokens: 500, url_sources: { user_input: 'all' } })));
    expect(normalizeTools(AgentToolsParams.parse(stored))).toEqual(stored);
  });

  it('accepts web_fetch enabled and still refuses web_search', () => {
    expect(refusal(fetchTool({ enabled: true }))).toBe('');
    expect(refusal([{ type: 'agent_toolset_20260401', configs: [{ name: 'web_search', enabled: true }] }] as Tools)).toMatch(/web_search is not supported by Paddock/);
  });
});
