import type Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, type RecordedRequest, type ScriptedResponse, textResponse, toolResultCount } from '~/server/harness/testing/fake-messages-api';
import { checkThreadInvariants } from '~/server/harness/testing/log-invariants';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';
import type { Runtime } from '~/server/runtime';
import { until } from '~/lib/testing/until';

/**
 * Inline agents (multiagent `inline_agents` enabled) end to end: the official SDK against /v1, the
 * fake model answering by system prompt. The coordinator defines an agent in its send_to_agent;
 * the agent is not saved, lives in the log, and a later wake (a new thread run, rebuilt from the
 * log) continues its thread.
 */
let sdk: SdkServer;
let rt: Runtime;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'inline-agents-sdk' });
  ({ rt, fake, client } = sdk);
});

afterEach(() => sdk.close());

const INLINE_SYSTEM = 'you are critic, an inline agent';
const systemOf = (req: RecordedRequest) => JSON.stringify(req.body?.system ?? '');
const toolsOf = (req: RecordedRequest) => JSON.stringify((req.body as { tools?: unknown } | null)?.tools ?? []);
const reports = (req: RecordedRequest) => (JSON.stringify(req.body?.messages ?? []).match(/\[Message from /g) ?? []).length;
const asked = (req: RecordedRequest, text: string) => JSON.stringify(req.body?.messages ?? []).includes(text);
const call = (name: string, input: Record<string, unknown>): ScriptedResponse => ({ kind: 'message', steps: [{ kind: 'tool_use', name, input }] });

async function idleWith(sessionId: string, reportsSeen: number) {
  await until(`${reportsSeen} reports and idle`, async () => {
    const events = await rt.store.getEvents(sessionId);
    const got = events.filter((e) => e.type === 'agent.thread_message_received' && !e.session_thread_id).length;
    return got >= reportsSeen && (await client.beta.sessions.retrieve(sessionId)).status === 'idle';
  });
}

describe('inline agents through the official SDK', () => {
  it('a coordinator with no roster defines an agent in send_to_agent; its thread runs the inline system prompt and reports back, threads.list shows it, and a later turn continues the same thread', { timeout: 120_000 }, async () => {
    const lead = await client.beta.agents.create({
      name: 'lead',
      model: 'claude-fake',
      system: 'you are lead',
      tools: [{ type: 'agent_toolset_20260401' }],
      multiagent: { type: 'multiagent_20261001', subagents: { type: 'enabled', inline_agents: { type: 'enabled' }, predefined_agents: [] } },
    });
    fake.setFallback((req) => {
      const n = toolResultCount(req);
      if (systemOf(req).includes(INLINE_SYSTEM)) return textResponse(asked(req, 'once more') ? 'critic: second look is fine' : 'critic: looks fine');
      if (n === 0) return call('send_to_agent', { agent: 'critic', message: 'review the plan', define: { system: INLINE_SYSTEM, description: 'reviews plans' } });
      if (asked(req, 'again') && n === 1) return call('send_to_agent', { agent: 'critic', message: 'once more' });
      return textResponse(`lead: ${reports(req)} reports`);
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'get it reviewed' }] }] });
    await idleWith(session.id, 1);

    // The coordinator was offered define; the inline agent's request ran its own system prompt, without delegation (depth 1).
    const leadReq = fake.requests.find((r) => systemOf(r).includes('you are lead'))!;
    expect(toolsOf(leadReq)).toContain('"define"');
    const criticReqs = () => fake.requests.filter((r) => systemOf(r).includes(INLINE_SYSTEM));
    expect(criticReqs()).toHaveLength(1);
    expect(toolsOf(criticReqs()[0]!)).not.toContain('send_to_agent');
    expect(asked(criticReqs()[0]!, 'review the plan')).toBe(true);

    const threads = [];
    for await (const t of client.beta.sessions.threads.list(session.id)) threads.push(t);
    expect(threads).toHaveLength(2);
    expect(threads[1]).toMatchObject({ status: 'idle', agent: { type: 'inline', name: 'critic', system: INLINE_SYSTEM, description: 'reviews plans', model: { id: 'claude-fake' } } });
    expect(threads[1]!.agent).not.toHaveProperty('id');
    const tid = threads[1]!.id;
    const events = await rt.store.getEvents(session.id);
    expect(events.find((e) => e.type === 'session.thread_created')).toMatchObject({ session_thread_id: tid, inline_agent: { system: INLINE_SYSTEM, description: 'reviews plans' } });
    expect(events.some((e) => e.type === 'agent.thread_message_received' && !e.session_thread_id && e.from_agent_name === 'critic' && JSON.stringify(e.content).includes('critic: looks fine'))).toBe(true);
    // Not saved: the only agents are the defaults and lead.
    const agents = [];
    for await (const a of client.beta.agents.list()) agents.push(a.name);
    expect(agents).not.toContain('critic');

    // A new wake rebuilds the threads from the log: the send continues the same thread, running the same definition.
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }] });
    await idleWith(session.id, 2);
    expect(criticReqs()).toHaveLength(2);
    expect(asked(criticReqs()[1]!, 'once more')).toBe(true);
    const after = await rt.store.getEvents(session.id);
    expect(after.filter((e) => e.type === 'session.thread_created')).toHaveLength(1);
    expect(after.filter((e) => e.type === 'agent.thread_message_received' && e.session_thread_id === tid)).toHaveLength(2);
    expect((await client.beta.sessions.threads.list(session.id)).data).toHaveLength(2);
    expect(checkThreadInvariants(after)).toEqual([]);
  });

  it('on the coordinator shape a define is an error result for the model and spawns nothing', { timeout: 60_000 }, async () => {
    const worker = await client.beta.agents.create({ name: 'worker', model: 'claude-fake', system: 'you are worker' });
    const lead = await client.beta.agents.create({ name: 'lead', model: 'claude-fake', system: 'you are lead', multiagent: { type: 'coordinator', agents: [worker.id] } });
    fake.setFallback((req) => {
      if (toolResultCount(req) === 0) return call('send_to_agent', { agent: 'critic', message: 'review', define: { system: INLINE_SYSTEM } });
      return textResponse('lead: could not');
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    await until('idle', async () => (await rt.store.getEvents(session.id)).some((e) => e.type === 'session.status_idle'));
    expect(toolsOf(fake.requests[0]!)).not.toContain('"define"');
    const events = await rt.store.getEvents(session.id);
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result)).toContain('inline agents are not enabled for this agent');
    expect(events.some((e) => e.type === 'session.thread_created')).toBe(false);
  });
});
