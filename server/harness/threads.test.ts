import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionAgent, ThreadAgent } from '~/lib/agent';
import { normalizeContextPolicy } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import { AgentToolsParams, normalizeTools } from '~/lib/toolset';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { type FakeMessagesApi, type RecordedRequest, type ScriptedResponse, startFakeMessagesApi, textResponse, toolResultCount } from '~/server/harness/testing/fake-messages-api';
import { checkThreadInvariants } from '~/server/harness/testing/log-invariants';
import { LiveBus } from '~/server/session/live-bus';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let live: LiveBus;
let harness: Harness;

const tools = (policy: 'always_allow' | 'always_ask' = 'always_allow') => normalizeTools(AgentToolsParams.parse([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: policy } } }]));
function threadAgent(name: string, policy: 'always_allow' | 'always_ask' = 'always_allow'): ThreadAgent {
  return { id: `agent_${name}`, type: 'agent', version: 1, name, description: `writes ${name}.txt`, model: { id: 'claude-fake' }, system: `you are ${name}`, tools: tools(policy), mcp_servers: [], skills: [], execution_identity: null, context_policy: normalizeContextPolicy(undefined) };
}
function coordinator(roster: ThreadAgent[]): SessionAgent {
  return { ...threadAgent('lead'), system: 'you are lead', multiagent: { type: 'coordinator', agents: roster } };
}
/** A coordinator with no roster that may define inline agents. */
function inlineCoordinator(): SessionAgent {
  return {
    ...threadAgent('lead'),
    system: 'you are lead',
    multiagent: { type: 'multiagent_20261001', advisor: { type: 'disabled' }, subagents: { type: 'enabled', inline_agents: { type: 'enabled' }, predefined_agents: [] }, workflows: { type: 'disabled' } },
  };
}

const systemOf = (req: RecordedRequest) => JSON.stringify(req.body?.system ?? '');
const reportsIn = (req: RecordedRequest) => (JSON.stringify(req.body?.messages ?? []).match(/\[Message from /g) ?? []).length;
const tool = (name: string, input: Record<string, unknown>, id: string) => ({ kind: 'tool_use' as const, name, input, id });

/** A scripted brain per agent (by its system prompt), so concurrent threads each get their own script. */
function brains(): void {
  fake.setFallback((req): ScriptedResponse => {
    const sys = systemOf(req);
    const n = toolResultCount(req);
    for (const w of ['alpha', 'beta']) {
      if (!sys.includes(`you are ${w}`)) continue;
      if (n === 0) return { kind: 'message', steps: [tool('write', { path: `/workspace/${w}.txt`, content: `written by ${w}` }, `toolu_${w}_w`)] };
      return textResponse(`${w} wrote ${w}.txt`);
    }
    // The lead: delegates to both at once, ends its turn, then reads both files once both reported.
    if (n === 0) return { kind: 'message', steps: [tool('send_to_agent', { agent: 'alpha', message: 'write alpha.txt' }, 'toolu_s1'), tool('send_to_agent', { agent: 'beta', message: 'write beta.txt' }, 'toolu_s2')] };
    if (n === 2 && reportsIn(req) < 2) return textResponse('waiting for reports');
    if (n === 2) return { kind: 'message', steps: [tool('read', { path: '/workspace/alpha.txt' }, 'toolu_r1')] };
    return textResponse('all done');
  });
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-threads-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  live = new LiveBus();
  harness = fakeModelHarness();
});

/** A harness asking the fake model, on memory hands: a second one stands for a harness restarted after a crash. */
function fakeModelHarness(): Harness {
  return new Harness({
    store,
    live,
    hands: new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' }),
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    maxRetries: 2,
    retryBaseMs: 5,
    leaseTtlMs: 2_000,
  });
}

afterEach(async () => {
  await harness.close();
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Wakes the session until a wake finds nothing more to do (a run that saw new work re-wakes itself). */
async function settle(id: string): Promise<StoredEvent[]> {
  let before = -1;
  for (let i = 0; i < 10; i++) {
    await harness.wake(id);
    const events = await store.getEvents(id);
    if (events.length === before) return events;
    before = events.length;
  }
  return store.getEvents(id);
}

describe('session threads', () => {
  it('a coordinator delegates to two agents at once; each runs its own thread on the shared hand and reports back; the lead reads what a child wrote', async () => {
    brains();
    const s = await store.createSession({ agent: coordinator([threadAgent('alpha'), threadAgent('beta')]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'get both files written' }] });
    const events = await settle(s.id);

    const created = events.filter((e) => e.type === 'session.thread_created');
    expect(created.map((e) => e.type === 'session.thread_created' && e.agent_name).sort()).toEqual(['alpha', 'beta']);
    const threadIds = created.map((e) => e.session_thread_id);
    for (const tid of threadIds) {
      const mine = events.filter((e) => e.session_thread_id === tid).map((e) => e.type);
      expect(mine).toContain('session.thread_status_running');
      expect(mine).toContain('agent.tool_use');
      expect(mine.at(-1) === 'session.thread_status_idle' || mine.includes('session.thread_status_idle')).toBe(true);
      // The child's conversation is its own: the lead's prompt is never in it.
      expect(mine).not.toContain('user.message');
    }
    // Both reports reached the primary thread, once each.
    const reports = events.filter((e) => e.type === 'agent.thread_message_received' && e.session_thread_id === undefined);
    expect(reports).toHaveLength(2);
    // One workspace: the lead reads the file alpha wrote.
    const read = events.find((e) => e.type === 'agent.tool_result' && e.session_thread_id === undefined && JSON.stringify(e.content).includes('written by alpha'));
    expect(read).toBeDefined();
    const lastPrimary = events.filter((e) => e.session_thread_id === undefined).at(-1);
    expect(lastPrimary?.type).toBe('session.status_idle');
    expect(checkThreadInvariants(events)).toEqual([]);
    // Each child's model saw its own system prompt and the lead's message, never the user's.
    const alphaReqs = fake.requests.filter((r) => systemOf(r).includes('you are alpha'));
    expect(alphaReqs.length).toBeGreaterThan(0);
    expect(JSON.stringify(alphaReqs[0]!.body?.messages)).toContain('write alpha.txt');
    expect(JSON.stringify(alphaReqs[0]!.body?.messages)).not.toContain('get both files written');
    expect((alphaReqs[0]!.body?.tools ?? []).map((t) => (t as { name: string }).name)).not.toContain('send_to_agent');
    const leadReq = fake.requests.find((r) => systemOf(r).includes('you are lead'));
    expect((leadReq!.body?.tools ?? []).map((t) => (t as { name: string }).name)).toEqual(expect.arrayContaining(['list_agents', 'send_to_agent']));
  });

  it('the offline demo brain delegates: "ask alpha to …" runs in alpha\'s thread, and the report comes back to the coordinator', async () => {
    await harness.close();
    harness = new Harness({ store, live, hands: new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' }), model: createDemoBrain({ chunkDelayMs: 0 }), leaseTtlMs: 2_000 });
    const s = await store.createSession({ agent: coordinator([threadAgent('alpha')]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'ask alpha to write notes.txt: from the demo' }] });
    const events = await settle(s.id);
    const child = events.find((e) => e.type === 'session.thread_created')?.session_thread_id;
    expect(child).toBeDefined();
    expect(events.find((e) => e.type === 'agent.tool_use' && e.session_thread_id === child)).toMatchObject({ name: 'write', input: { file_path: 'notes.txt', content: 'from the demo' } });
    const last = events.filter((e) => e.type === 'agent.message' && !e.session_thread_id).at(-1);
    expect(JSON.stringify(last)).toContain('Report from alpha');
    expect(checkThreadInvariants(events)).toEqual([]);
  });

  it('a send to an agent that is not on the roster is an error result naming the roster, and no thread starts', async () => {
    fake.setFallback((req) => (toolResultCount(req) === 0 ? { kind: 'message', steps: [tool('send_to_agent', { agent: 'gamma', message: 'x' }, 'toolu_x')] } : textResponse('ok')));
    const s = await store.createSession({ agent: coordinator([threadAgent('alpha')]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    const events = await settle(s.id);
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result)).toContain('not an agent of your roster (alpha)');
    expect(events.some((e) => e.type === 'session.thread_created')).toBe(false);
    expect(checkThreadInvariants(events)).toEqual([]);
  });

  it('an inline agent\'s thread is rebuilt from the log: a harness stopped while the thread worked leaves it to a fresh one, which runs the same definition and reports back', async () => {
    let childAnswers = false;
    fake.setFallback((req): ScriptedResponse => {
      const n = toolResultCount(req);
      if (systemOf(req).includes('you are critic')) return childAnswers ? textResponse('critic: it reads well') : { kind: 'hang' };
      if (n === 0) return { kind: 'message', steps: [tool('send_to_agent', { agent: 'critic', message: 'review the plan', define: { system: 'you are critic', description: 'reviews' } }, 'toolu_d')] };
      return textResponse(reportsIn(req) > 0 ? 'lead: reviewed' : 'waiting for the critic');
    });
    const s = await store.createSession({ agent: inlineCoordinator() });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'get the plan reviewed' }] });
    const first = harness.wake(s.id);
    for (let i = 0; i < 300 && !fake.requests.some((r) => systemOf(r).includes('you are critic')); i++) await new Promise((r) => setTimeout(r, 20));
    expect(fake.requests.some((r) => systemOf(r).includes('you are critic'))).toBe(true);
    await harness.close();
    await first;
    expect((await store.getEvents(s.id)).some((e) => e.type === 'agent.thread_message_received' && e.session_thread_id === undefined)).toBe(false);

    childAnswers = true;
    harness = fakeModelHarness();
    const events = await settle(s.id);
    const created = events.filter((e) => e.type === 'session.thread_created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ agent_name: 'critic', inline_agent: { system: 'you are critic', description: 'reviews' } });
    const criticReqs = fake.requests.filter((r) => systemOf(r).includes('you are critic'));
    expect(criticReqs.length).toBeGreaterThanOrEqual(2);
    expect((criticReqs.at(-1)!.body?.tools ?? []).map((t) => (t as { name: string }).name)).not.toContain('send_to_agent');
    const report = events.find((e) => e.type === 'agent.thread_message_received' && e.session_thread_id === undefined);
    expect(report).toMatchObject({ from_agent_name: 'critic', from_session_thread_id: created[0]!.session_thread_id });
    expect(JSON.stringify(events.filter((e) => e.type === 'agent.message' && !e.session_thread_id).at(-1))).toContain('lead: reviewed');
    expect(checkThreadInvariants(events)).toEqual([]);
  });
});
