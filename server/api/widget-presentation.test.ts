import { describe, expect, it } from 'vitest';
import { VISITOR_HEADER, WIDGET_DEFAULTS, type WidgetSettingsInput } from '~/lib/widget';
import { demoRuntimePerTest } from '~/server/api/testing/demo-runtime';
import { SAME_ORIGIN, httpApi } from '~/server/api/testing/http';
import type { Runtime } from '~/server/runtime';
import type { KyselySessionStore } from '~/server/session/kysely-queries';

const runtime = demoRuntimePerTest('paddock-widget-look-');
const DOCS = 'http://127.0.0.1:4020';

async function owner(rt: Runtime): Promise<Record<string, string>> {
  const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
  return { ...SAME_ORIGIN, cookie: signed!.setCookie.split(';')[0]! };
}

async function enable(rt: Runtime, o: Partial<WidgetSettingsInput> = {}): Promise<void> {
  await rt.agents.ensureDefaults();
  await rt.access.widgets.store.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default', ...o });
}

async function visitor(rt: Runtime): Promise<{ headers: Record<string, string>; opened: Record<string, unknown> }> {
  const r = await httpApi(rt).mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, SAME_ORIGIN);
  expect(r.status).toBe(200);
  const opened = r.body!.result!.data as { token: string };
  return { headers: { ...SAME_ORIGIN, [VISITOR_HEADER]: opened.token }, opened };
}

/** A conversation whose log holds a built-in and an MCP call with their results, each marked so a leak is easy to find. */
async function conversationWithTools(rt: Runtime, headers: Record<string, string>): Promise<string> {
  const id = ((await httpApi(rt).mutate('widget.create', undefined, headers)).body!.result!.data as { id: string }).id;
  const [bash, mcp] = await rt.store.emitEvents(id, [
    { type: 'agent.tool_use', name: 'bash', input: { command: 'echo CMD-MARK' }, model_tool_use_id: 'toolu_1', hand: 'sandbox-1', evaluated_permission: 'allow' },
    { type: 'agent.mcp_tool_use', name: 'lookup_internal_db', mcp_server_name: 'crm-server', input: { q: 'INPUT-MARK' }, model_tool_use_id: 'toolu_2', evaluated_permission: 'allow' },
  ]);
  await rt.store.emitEvents(id, [
    { type: 'agent.tool_result', tool_use_id: bash!.id, content: [{ type: 'text', text: 'OUTPUT-MARK' }], hand: 'sandbox-1' },
    { type: 'agent.mcp_tool_result', mcp_tool_use_id: mcp!.id, content: [{ type: 'text', text: 'MCP-OUTPUT-MARK' }] },
    { type: 'agent.message', content: [{ type: 'text', text: 'Here is your answer.' }] },
  ]);
  return id;
}

const LEAKS = /bash|CMD-MARK|lookup_internal_db|crm-server|INPUT-MARK|OUTPUT-MARK|sandbox-1/;

describe('docs widget presentation', () => {
  it("gives a visitor the owner's display name, greeting and suggested questions, and keeps rows saved before them readable", async () => {
    const rt = runtime();
    await enable(rt, { display_name: 'Docs helper', greeting: 'Hi! Ask me about installing.', suggested_questions: ['How do I install it?', 'Which ports?'] });
    const { opened } = await visitor(rt);
    expect(opened).toMatchObject({ agent: { name: 'Docs helper' }, greeting: 'Hi! Ask me about installing.', suggested_questions: ['How do I install it?', 'Which ports?'], show_tool_names: false });

    // A row written before these settings existed: read with their defaults (the agent's own name).
    const { display_name: _d, greeting: _g, suggested_questions: _s, show_tool_names: _t, ...old } = { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default' };
    await (rt.store as KyselySessionStore).db.updateTable('widget_settings').set({ body: JSON.stringify(old) }).where('agent_id', '=', 'agent_default').execute();
    const again = await visitor(rt);
    expect(again.opened).toMatchObject({ agent: { name: (await rt.agents.getAgent('agent_default')).name }, greeting: '', suggested_questions: [], show_tool_names: false });
  });

  it('refuses a fourth suggested question, an empty one and a long greeting, naming the field', async () => {
    const rt = runtime();
    await rt.agents.ensureDefaults();
    const api = httpApi(rt);
    const boss = await owner(rt);
    const set = (over: Record<string, unknown>) => api.mutate('widgets.set', { agentId: 'agent_default', ...WIDGET_DEFAULTS, environment_id: 'env_default', ...over }, boss);
    for (const [over, field] of [
      [{ suggested_questions: ['a', 'b', 'c', 'd'] }, 'suggested_questions'],
      [{ suggested_questions: ['  '] }, 'suggested_questions'],
      [{ greeting: 'x'.repeat(501) }, 'greeting'],
      [{ display_name: 'x'.repeat(61) }, 'display_name'],
    ] as const) {
      const r = await set(over);
      expect(r.status, field).toBe(400);
      expect(r.text).toContain(field);
    }
    expect((await set({ suggested_questions: ['a', 'b', 'c'] })).status).toBe(200);
  });

  it("tells the owner which of the agent's tools would run for an anonymous visitor without asking", async () => {
    const rt = runtime();
    await rt.agents.ensureDefaults();
    const api = httpApi(rt);
    const boss = await owner(rt);
    const get = async (agentId: string) => (await api.query('widgets.get', { agentId }, boss)).body!.result!.data as { unasked_tools: string[] };
    // The default agent runs its whole toolset unasked.
    expect((await get('agent_default')).unasked_tools).toEqual(expect.arrayContaining(['bash', 'write', 'web_fetch']));
    const careful = await rt.agents.createAgent({
      name: 'careful',
      model: 'claude-sonnet-4-5',
      tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', permission_policy: { type: 'always_allow' } }] }],
    });
    expect((await get(careful.id)).unasked_tools).toEqual(['read']);
  });

  it('sends a visitor no tool name, input, hand or output while the widget hides them, in the list and the follow alike', async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const { headers } = await visitor(rt);
    const id = await conversationWithTools(rt, headers);
    const list = await api.query('events.list', { sessionId: id }, headers);
    const follow = await api.query('events.follow', { sessionId: id }, headers);
    for (const r of [list, follow]) {
      expect(r.text).toContain('Here is your answer.');
      expect(r.text).toContain('agent.tool_use');
      expect(r.text).not.toMatch(LEAKS);
    }
    // The owner reads the same session whole.
    expect((await api.query('events.list', { sessionId: id }, await owner(rt))).text).toMatch(/lookup_internal_db.*crm-server/s);
  });

  it('sends a visitor the tool names once the owner allows it', async () => {
    const rt = runtime();
    await enable(rt, { show_tool_names: true });
    const api = httpApi(rt);
    const { headers } = await visitor(rt);
    const id = await conversationWithTools(rt, headers);
    expect((await api.query('events.list', { sessionId: id }, headers)).text).toMatch(/"bash".*CMD-MARK.*lookup_internal_db.*OUTPUT-MARK/s);
    expect((await api.query('events.follow', { sessionId: id }, headers)).text).toMatch(/"bash".*lookup_internal_db/s);
  });
});
