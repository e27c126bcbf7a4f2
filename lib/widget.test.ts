import { describe, expect, it } from 'vitest';
import { normalizeTools } from '~/lib/toolset';
import { WIDGET_DEFAULTS, embedSnippet, normalizeOrigin, spentBudget, toolsRunWithoutAsking, visitorDelta, widgetAllows } from '~/lib/widget';
import { clientIp } from '~/server/access/client-ip';
import { SlidingWindow } from '~/server/widgets/rate-limit';

describe('widget origins, budgets, addresses and windows', () => {
  it('normalizes an origin and refuses anything that is not exactly one', () => {
    expect(normalizeOrigin('HTTPS://Docs.Example.com:443')).toBe('https://docs.example.com');
    expect(normalizeOrigin('http://127.0.0.1:4020')).toBe('http://127.0.0.1:4020');
    for (const bad of ['', '*', 'null', 'docs.example.com', 'https://docs.example.com/', 'https://docs.example.com/x', 'https://a.example?x', 'ftp://a.example', 'javascript:alert(1)', 'https://u:p@a.example']) expect(normalizeOrigin(bad), bad).toBeNull();
  });

  it('allows an origin only when the widget is on and lists it', () => {
    const s = { enabled: true, allowed_origins: ['https://a.example'] };
    expect(widgetAllows(s, 'https://a.example')).toBe(true);
    expect(widgetAllows(s, 'https://b.example')).toBe(false);
    expect(widgetAllows({ ...s, enabled: false }, 'https://a.example')).toBe(false);
    expect(widgetAllows(null, 'https://a.example')).toBe(false);
  });

  it('says which budget a conversation spent, tokens first', () => {
    const s = { ...WIDGET_DEFAULTS, max_tokens_per_session: 1_000, max_minutes_per_session: 10 };
    expect(spentBudget(s, { tokens: 999, createdAt: 0 }, 9 * 60_000)).toBeNull();
    expect(spentBudget(s, { tokens: 1_000, createdAt: 0 }, 0)).toBe('tokens');
    expect(spentBudget(s, { tokens: 0, createdAt: 0 }, 10 * 60_000)).toBe('time');
    expect(embedSnippet('https://p.example', 'agent_x')).toBe('<script src="https://p.example/embed.js" data-agent="agent_x" async></script>');
  });

  it("reads the client's address from the entry the trusted proxies appended", () => {
    const h = (xff?: string) => new Headers(xff === undefined ? {} : { 'x-forwarded-for': xff });
    expect(clientIp(h('203.0.113.9'), 0)).toBe('203.0.113.9');
    expect(clientIp(h('1.1.1.1, 203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientIp(h('1.1.1.1, 203.0.113.9, 10.0.0.2'), 2)).toBe('203.0.113.9');
    expect(clientIp(h('203.0.113.9'), 3)).toBe('203.0.113.9');
    expect(clientIp(h(), 0)).toBe('unknown');
  });

  it('counts hits per key in a sliding window, refusing without counting', () => {
    const w = new SlidingWindow(1_000, 2);
    expect([w.take('a', 2, 0), w.take('a', 2, 10), w.take('a', 2, 20)]).toEqual([true, true, false]);
    expect(w.take('a', 2, 1_005)).toBe(true);
    expect(w.take('b', 2, 1_005)).toBe(true);
    w.take('c', 2, 1_006);
    // At most two keys kept: the oldest went.
    expect(w.allows('a', 1, 1_007)).toBe(true);
  });
});

describe('what a widget tells its owner and sends its visitors', () => {
  it("lists the tools an agent runs without asking, an MCP server's by server and name", () => {
    const tools = normalizeTools([
      { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'grep', permission_policy: { type: 'always_allow' } }, { name: 'bash', enabled: false, permission_policy: { type: 'always_allow' } }] },
      { type: 'mcp_toolset', mcp_server_name: 'crm', configs: [{ name: 'lookup', permission_policy: { type: 'always_allow' } }] },
      { type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_allow' } } },
    ]);
    expect(toolsRunWithoutAsking(tools)).toEqual(['grep', 'crm/lookup', 'docs/*']);
    expect(toolsRunWithoutAsking(normalizeTools([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }]))).toEqual([]);
  });

  it('drops a streamed tool input and hand progress for a visitor of a widget that hides its tools, and keeps text', () => {
    const text = { kind: 'text' as const, session_id: 's', model_request_start_id: 'm', index: 0, text: 'hi' };
    const input = { kind: 'tool_input' as const, session_id: 's', model_request_start_id: 'm', index: 1, name: 'bash', partial_json: '{' };
    expect(visitorDelta(text, false)).toBe(text);
    expect(visitorDelta(input, false)).toBeNull();
    expect(visitorDelta(input, true)).toBe(input);
  });
});
