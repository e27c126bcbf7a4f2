import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, type RecordedRequest, type ScriptedResponse, textResponse, toolResultCount } from '~/server/harness/testing/fake-messages-api';
import { checkThreadInvariants } from '~/server/harness/testing/log-invariants';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';
import type { Runtime } from '~/server/runtime';
import { until } from '~/lib/testing/until';

/**
 * Session threads (multiagent) end to end: the official SDK against the /v1 handler, the scripted
 * fake model (a script per agent, by its system prompt: threads run concurrently) and a real
 * sandboxed hand the threads share.
 */
let sdk: SdkServer;
let rt: Runtime;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'threads-sdk', sandbox: true });
  ({ rt, fake, client } = sdk);
});

afterEach(() => sdk.close());

const systemOf = (req: RecordedRequest) => JSON.stringify(req.body?.system ?? '');
const reports = (req: RecordedRequest) => (JSON.stringify(req.body?.messages ?? []).match(/\[Message from /g) ?? []).length;
const call = (name: string, input: Record<string, unknown>): ScriptedResponse => ({ kind: 'message', steps: [{ kind: 'tool_use', name, input }] });

async function allEvents(sessionId: string) {
  return (await rt.store.getEvents(sessionId));
}

async function team(policy: 'always_allow' | 'always_ask' = 'always_allow') {
  const worker = await client.beta.agents.create({ name: 'worker', model: 'claude-fake', system: 'you are worker', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: policy } } }] });
  const idler = await client.beta.agents.create({ name: 'idler', model: 'claude-fake', system: 'you are idler', tools: [{ type: 'agent_toolset_20260401' }] });
  const lead = await client.beta.agents.create({ name: 'lead', model: 'claude-fake', system: 'you are lead', tools: [{ type: 'agent_toolset_20260401' }], multiagent: { type: 'coordinator', agents: [worker.id, { type: 'agent', id: idler.id, version: 1 }] } });
  return { worker, idler, lead };
}

describe('session threads through the official SDK', () => {
  it('a coordinator spawns a thread for a rostered agent, which runs bash on the shared hand and reports back; threads.list and the thread\'s events and stream show it', { timeout: 120_000 }, async () => {
    const { lead } = await team();
    expect(lead.multiagent).toMatchObject({ type: 'coordinator', agents: [{ type: 'agent', version: 1 }, { type: 'agent', version: 1 }] });
    fake.setFallback((req) => {
      const sys = systemOf(req);
      const n = toolResultCount(req);
      if (sys.includes('you are worker')) return n === 0 ? call('bash', { command: 'echo made-by-worker > shared.txt && cat shared.txt' }) : textResponse('worker: wrote shared.txt');
      if (n === 0) return call('send_to_agent', { agent: 'worker', message: 'write shared.txt with bash' });
      if (reports(req) === 0) return textResponse('delegated; waiting');
      if (n === 1) return call('bash', { command: 'cat shared.txt' });
      return textResponse('lead: done');
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default' });
    expect(session.agent.multiagent).toMatchObject({ type: 'coordinator', agents: [{ name: 'worker', system: 'you are worker' }, { name: 'idler' }] });
    const primaryStream = await client.beta.sessions.events.stream(session.id);
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'get it done' }] }] });

    // The primary stream shows the child's creation and status, and the report, never the child's own tool calls.
    const seen: { type: string; session_thread_id?: string | null }[] = [];
    for await (const e of primaryStream) {
      seen.push(e);
      if (e.type === 'agent.message' && JSON.stringify(e.content).includes('lead: done')) break;
    }
    const created = seen.find((e) => e.type === 'session.thread_created');
    expect(created?.session_thread_id).toMatch(/^sthr_/);
    const tid = created!.session_thread_id!;
    expect(seen.some((e) => e.type === 'session.thread_status_idle' && e.session_thread_id === tid)).toBe(true);
    expect(seen.some((e) => e.type === 'agent.thread_message_received' && !e.session_thread_id)).toBe(true);
    expect(seen.filter((e) => e.type === 'agent.tool_use').every((e) => !e.session_thread_id)).toBe(true);
    await until('idle', async () => (await client.beta.sessions.retrieve(session.id)).status === 'idle');

    const threads = [];
    for await (const t of client.beta.sessions.threads.list(session.id)) threads.push(t);
    expect(threads.map((t) => t.parent_thread_id === null)).toEqual([true, false]);
    expect(threads[1]).toMatchObject({ id: tid, type: 'session_thread', status: 'idle', agent: { name: 'worker' } });
    expect((await client.beta.sessions.threads.list(session.id, { statuses: ['running'] })).data).toEqual([]);
    expect(await client.beta.sessions.threads.retrieve(tid, { session_id: session.id })).toMatchObject({ id: tid, status: 'idle' });

    const childEvents = [];
    for await (const e of client.beta.sessions.threads.events.list(tid, { session_id: session.id })) childEvents.push(e);
    const bash = childEvents.find((e) => e.type === 'agent.tool_use');
    expect(bash).toMatchObject({ name: 'bash' });
    expect(JSON.stringify(childEvents.find((e) => e.type === 'agent.tool_result'))).toContain('made-by-worker');
    // One workspace: the lead read what the worker wrote.
    const leadRead = (await allEvents(session.id)).filter((e) => e.type === 'agent.tool_result' && !e.session_thread_id);
    expect(JSON.stringify(leadRead.at(-1))).toContain('made-by-worker');

    // The thread's stream replays its own events after Last-Event-ID.
    const threadStream = await client.beta.sessions.threads.events.stream(tid, { session_id: session.id }, { headers: { 'Last-Event-ID': '0' } });
    const replay: string[] = [];
    for await (const e of threadStream) {
      replay.push(e.type);
      if (e.type === 'session.thread_status_idle') break;
    }
    expect(replay).toEqual(expect.arrayContaining(['session.thread_created', 'agent.thread_message_received', 'session.thread_status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message']));
    expect(replay).not.toContain('user.message');
    await client.beta.sessions.threads.archive(tid, { session_id: session.id });
    expect((await client.beta.sessions.threads.retrieve(tid, { session_id: session.id })).archived_at).not.toBeNull();
    expect(checkThreadInvariants(await allEvents(session.id))).toEqual([]);
  });

  it('an interrupt naming a thread stops that thread only; a permission request in a child is cross-posted and answered from the primary stream', { timeout: 120_000 }, async () => {
    const { lead } = await team('always_ask');
    fake.setFallback((req) => {
      const sys = systemOf(req);
      const n = toolResultCount(req);
      if (sys.includes('you are idler')) return { kind: 'hang' };
      if (sys.includes('you are worker')) return n === 0 ? call('bash', { command: 'echo asked-first' }) : textResponse('worker: ran it');
      if (n === 0) return { kind: 'message', steps: [{ kind: 'tool_use', name: 'send_to_agent', input: { agent: 'idler', message: 'think forever' } }, { kind: 'tool_use', name: 'send_to_agent', input: { agent: 'worker', message: 'run echo' } }] };
      return textResponse(`lead: ${reports(req)} reports`);
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default' });
    const stream = await client.beta.sessions.events.stream(session.id);
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    let ask: { id: string; session_thread_id?: string | null } | null = null;
    for await (const e of stream) {
      if (e.type === 'agent.tool_use' && e.evaluated_permission === 'ask') {
        ask = e;
        break;
      }
    }
    expect(ask?.session_thread_id).toMatch(/^sthr_/);
    // Answered from the primary stream, naming no thread: it reaches the thread that asked.
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: ask!.id, result: 'allow' }] });
    await until('the worker ran', async () => (await allEvents(session.id)).some((e) => e.type === 'agent.tool_result' && e.session_thread_id === ask!.session_thread_id && JSON.stringify(e.content).includes('asked-first')));

    const idler = await until('the idler thread', async () => (await client.beta.sessions.threads.list(session.id)).data.find((t) => t.agent && 'name' in t.agent && t.agent.name === 'idler' && t.status === 'running'));
    await until('the idler asks the model', () => Promise.resolve(fake.requests.some((r) => systemOf(r).includes('you are idler'))));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt', session_thread_id: idler.id }] });
    await until('the idler idles', async () => (await client.beta.sessions.threads.retrieve(idler.id, { session_id: session.id })).status === 'idle');
    await until('the session idles', async () => (await client.beta.sessions.retrieve(session.id)).status === 'idle');
    const events = await allEvents(session.id);
    // Only the idler was interrupted: the primary has no interrupt, and the worker finished its turn and reported.
    expect(events.filter((e) => e.type === 'user.interrupt').map((e) => e.session_thread_id)).toEqual([idler.id]);
    expect(events.some((e) => e.type === 'agent.thread_message_received' && !e.session_thread_id && e.from_agent_name === 'worker')).toBe(true);
    expect(events.some((e) => e.type === 'agent.thread_message_received' && !e.session_thread_id && e.from_agent_name === 'idler')).toBe(false);
    expect(checkThreadInvariants(events)).toEqual([]);
  });

  it('gives each thread the usage of its own model requests and its time running, computed from the one log', { timeout: 120_000 }, async () => {
    const { lead } = await team();
    const leadUsage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    fake.setFallback((req) => {
      const sys = systemOf(req);
      // The worker's one request, slow enough that its time running shows.
      if (sys.includes('you are worker')) return textResponse('worker: noted', { delayMs: 60, usage: { input_tokens: 1000, output_tokens: 70, cache_creation_input_tokens: 5, cache_read_input_tokens: 300 } });
      if (toolResultCount(req) === 0) return { kind: 'message', steps: [{ kind: 'tool_use', name: 'send_to_agent', input: { agent: 'worker', message: 'note it' } }], usage: leadUsage };
      return textResponse(reports(req) === 0 ? 'delegated; waiting' : 'lead: done', { usage: leadUsage });
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default' });
    const before = (await client.beta.sessions.threads.list(session.id)).data;
    // Nothing ran yet: no stats, no usage.
    expect(before).toMatchObject([{ stats: null, usage: null }]);
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    await until('the report is answered', async () => (await allEvents(session.id)).some((e) => e.type === 'agent.message' && JSON.stringify(e.content).includes('lead: done')));
    await until('idle', async () => (await client.beta.sessions.retrieve(session.id)).status === 'idle');

    const [primary, child] = (await client.beta.sessions.threads.list(session.id)).data;
    const leadRequests = fake.requests.filter((r) => systemOf(r).includes('you are lead')).length;
    expect(leadRequests).toBeGreaterThanOrEqual(2);
    // Each thread counts only its own requests: the worker's one, the lead's own (not the worker's).
    expect(child?.usage).toMatchObject({ input_tokens: 1000, output_tokens: 70, cache_read_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 0 } });
    expect(primary?.usage).toMatchObject({ input_tokens: 10 * leadRequests, output_tokens: leadRequests, cache_read_input_tokens: 0 });
    // A child starts at once; its time running covers its slow request and is its usage's too.
    expect(child?.stats?.startup_seconds).toBe(0);
    expect(child?.stats?.active_seconds).toBeGreaterThanOrEqual(0.06);
    expect(child?.usage?.active_seconds).toBe(child?.stats?.active_seconds);
    expect(child?.stats?.duration_seconds).toBeGreaterThanOrEqual(child?.stats?.active_seconds ?? Infinity);
    // The primary ran the whole time its child did.
    expect(primary?.stats?.active_seconds).toBeGreaterThanOrEqual(child?.stats?.active_seconds ?? Infinity);
    expect(primary?.stats?.startup_seconds).toBeGreaterThanOrEqual(0);
    // retrieve answers the same figures as the list.
    const one = await client.beta.sessions.threads.retrieve(child!.id, { session_id: session.id });
    expect(one.usage).toEqual(child?.usage);
  });

  it('refuses a rostered agent that has multiagent itself, naming it', async () => {
    const { lead } = await team();
    const err = await client.beta.agents.create({ name: 'top', model: 'm', multiagent: { type: 'coordinator', agents: [lead.id] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(err)).toContain(`agent ${lead.id} has multiagent itself`);
  });
});
