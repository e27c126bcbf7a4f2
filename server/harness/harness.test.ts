import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveDelta, NewEvent, StoredEvent } from '~/lib/events';
import type { ExecuteContext, Hand, ToolSpec } from '~/lib/hand';
import { normalizeTools } from '~/lib/toolset';
import { HandRegistry } from '~/server/hands/registry';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import {
  type FakeMessagesApi,
  type ScriptedResponse,
  errorResponse,
  startFakeMessagesApi,
  textResponse,
  toolUseResponse,
} from '~/server/harness/testing/fake-messages-api';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let live: LiveBus;
const harnesses: Harness[] = [];

function memoryHands(provisioner: Provisioner = createMemoryProvisioner()): HandRegistry {
  return new HandRegistry({ store, live, provisioners: { memory: provisioner }, defaultKind: 'memory' });
}

function makeHarness(opts: { hands?: HandRegistry; maxRetries?: number } = {}): Harness {
  const h = new Harness({
    store,
    live,
    hands: opts.hands ?? memoryHands(),
    // The real SDK, over real HTTP + SSE, against the scripted fake.
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    maxRetries: opts.maxRetries ?? 2,
    retryBaseMs: 5,
    leaseTtlMs: 2_000,
  });
  harnesses.push(h);
  return h;
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-harness-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  live = new LiveBus();
});

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function sessionWith(text: string, ...script: ScriptedResponse[]): Promise<string> {
  fake.enqueue(...script);
  const s = await store.createSession({});
  await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text }] });
  return s.id;
}

const types = (events: StoredEvent[]) => events.map((e) => e.type);

/** A session whose answered turn made one `write` call that has no result yet (a crash mid tool run). */
async function sessionWithPendingCall(input: Record<string, unknown>, modelToolUseId: string) {
  const s = await store.createSession({});
  const [, , start] = await store.emitEvents(s.id, [
    { type: 'user.message', content: [{ type: 'text', text: 'q' }] },
    { type: 'session.status_running' },
    { type: 'span.model_request_start' },
  ]);
  await store.emitEvents(s.id, [
    { type: 'agent.tool_use', name: 'write', input, model_tool_use_id: modelToolUseId, hand: 'memory-1' },
    { type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
  ]);
  return s;
}
const messages = () => fake.requests.filter((r) => r.path === '/v1/messages');

/** Resolves with the first event of the given type (from the start of the log). */
async function waitForEvent(id: string, type: StoredEvent['type']): Promise<StoredEvent> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 5_000);
  try {
    for await (const e of store.follow(id, 0, ac.signal)) if (e.type === type) return e;
    throw new Error(`no ${type} within 5 s`);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

/** Checks what must hold for any finished session log. */
function assertWellFormed(events: StoredEvent[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const uses = events.filter((e) => e.type === 'agent.tool_use');
  for (const u of uses) {
    expect(events.filter((e) => (e.type === 'agent.tool_result' || e.type === 'user.tool_result') && e.tool_use_id === u.id)).toHaveLength(1);
  }
  const starts = events.filter((e) => e.type === 'span.model_request_start').map((e) => e.id);
  const ends = events.filter((e) => e.type === 'span.model_request_end').map((e) => e.model_request_start_id);
  expect(new Set(ends).size).toBe(ends.length); // no model turn stored twice
  for (const end of ends) expect(starts).toContain(end);
  expect(events.at(-1)?.type).toBe('session.status_idle');
}

describe('harness against the Messages API (real SDK, fake server)', () => {
  it('runs a multi-step tool conversation to an idle end_turn', async () => {
    const id = await sessionWith(
      'make a note',
      toolUseResponse('write', { file_path: 'n.md', content: 'alpha beta' }, { text: 'Writing.', id: 'toolu_w1' }),
      {
        kind: 'message',
        steps: [
          { kind: 'thinking', thinking: 'check and fix it', signature: 'sig-1' },
          { kind: 'tool_use', name: 'read', input: { file_path: 'n.md' }, id: 'toolu_r1' },
          { kind: 'tool_use', name: 'edit', input: { file_path: 'n.md', old_string: 'beta', new_string: 'gamma' }, id: 'toolu_e1' },
        ],
      },
      toolUseResponse('read', { file_path: 'n.md' }, { id: 'toolu_r2' }),
      textResponse('Done: the note says alpha gamma.'),
    );
    await makeHarness().wake(id);

    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(types(events)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'agent.tool_use',
      'span.model_request_end',
      'hand.provisioned',
      'agent.tool_result',
      'span.model_request_start',
      'agent.thinking',
      'agent.tool_use',
      'agent.tool_use',
      'span.model_request_end',
      'agent.tool_result',
      'agent.tool_result',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'agent.tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results.at(-1)).toMatchObject({ content: [{ type: 'text', text: 'alpha gamma' }], hand: 'memory-1' });
    expect(events.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });

    // Each request replays the history, with Claude's own ids, thinking and its signature.
    const reqs = messages();
    expect(reqs).toHaveLength(4);
    const third = JSON.stringify(reqs[2]!.body!.messages);
    expect(third).toContain('"tool_use_id":"toolu_r1"');
    expect(third).toContain('"tool_use_id":"toolu_e1"');
    expect(third).toContain('"signature":"sig-1"');
    expect(reqs.every((r) => r.auth === 'bearer')).toBe(true);
  });

  it('streams text deltas to live subscribers before the agent.message is stored', async () => {
    const id = await sessionWith('count', textResponse('one two three four five six', { chunks: 6, chunkDelayMs: 20 }));
    const seen: Array<{ at: number; what: string }> = [];
    live.subscribe(id, (d: LiveDelta) => seen.push({ at: performance.now(), what: `delta:${d.kind}` }));
    const ac = new AbortController();
    const following = (async () => {
      for await (const e of store.follow(id, 0, ac.signal)) {
        if (e.type === 'agent.message') seen.push({ at: performance.now(), what: 'stored' });
      }
    })();
    await makeHarness().wake(id);
    ac.abort();
    await following;

    const stored = seen.findIndex((s) => s.what === 'stored');
    expect(stored).toBeGreaterThan(0);
    expect(seen.slice(0, stored).filter((s) => s.what === 'delta:text').length).toBeGreaterThanOrEqual(6);
    const end = (await store.getEvents(id, { types: ['span.model_request_end'] }))[0]!;
    expect(end.type === 'span.model_request_end' && end.ttft_ms).toBeGreaterThan(0);
  });

  it('reads usage without cache fields, as Ollama and llama.cpp send it', async () => {
    const id = await sessionWith('hi', textResponse('hello', { omitCacheUsage: true, usage: { input_tokens: 12, output_tokens: 3 } }));
    await makeHarness().wake(id);
    const end = (await store.getEvents(id, { types: ['span.model_request_end'] }))[0];
    expect(end).toMatchObject({ is_error: false, model_usage: { input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  });

  it('an interrupt aborts the model stream and idles; with nothing streamed yet no answer is stored', async () => {
    const id = await sessionWith('go on forever', { kind: 'hang' });
    const done = makeHarness().wake(id);
    await waitForEvent(id, 'span.model_request_start');
    await new Promise((r) => setTimeout(r, 50)); // the stream is open and hanging
    const t0 = performance.now();
    await store.emitEvent(id, { type: 'user.interrupt' });
    await done;
    expect(performance.now() - t0).toBeLessThan(2_000);

    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(types(events)).not.toContain('agent.message');
    expect(events.find((e) => e.type === 'span.model_request_end')).toMatchObject({ is_error: true, model_stop_reason: 'interrupted' });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  });

  it('an interrupted answer keeps what streamed, marked interrupted under its preview id, and the model sees it next turn', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const id = await sessionWith('count slowly', textResponse(words, { chunks: 40, chunkDelayMs: 50 }), textResponse('ok'));
    const previews: LiveDelta[] = [];
    const unsubscribe = live.subscribe(id, (d) => previews.push(d));
    const done = makeHarness().wake(id);
    await vi.waitFor(() => expect(previews.filter((d) => d.kind === 'text').length).toBeGreaterThan(3), { timeout: 10_000 });
    await store.emitEvent(id, { type: 'user.interrupt' });
    await done;
    unsubscribe();

    const events = await store.getEvents(id);
    assertWellFormed(events);
    const partial = events.find((e) => e.type === 'agent.message');
    expect(partial).toMatchObject({ interrupted: true });
    const text = partial?.type === 'agent.message' && partial.content[0]?.type === 'text' ? partial.content[0].text : '';
    expect(words.startsWith(text) && text.length > 0 && text.length < words.length).toBe(true);
    // Stored under the id its live preview carried: the page swaps the preview for it in place.
    expect(previews.find((d) => d.kind === 'text')).toMatchObject({ event_id: partial?.id });

    await store.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'go on' }] });
    await makeHarness().wake(id);
    const body = messages().at(-1)?.body as unknown as { messages: { role: string; content: { type: string; text?: string }[] }[] };
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1]?.content).toEqual([{ type: 'text', text }]);
    expect(body.messages[2]?.content.map((c) => c.text)).toEqual(['[The user interrupted this answer here.]', 'go on']);
  });

  it('an interrupt aborts tools in flight and answers each call with an error result', async () => {
    const aborted: string[] = [];
    const slow: Hand = {
      id: 'memory-1',
      kind: 'memory',
      tools: () => Promise.resolve([] as ToolSpec[]),
      execute: (_n: string, _i: unknown, ctx: ExecuteContext) =>
        new Promise<string>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            aborted.push(ctx.callId);
            reject(new Error('aborted'));
          });
        }),
      lost: new Promise<string>(() => undefined),
      close: () => Promise.resolve(),
    };
    const id = await sessionWith('run two things', {
      kind: 'message',
      steps: [
        { kind: 'tool_use', name: 'bash', input: { command: 'sleep 100' } },
        { kind: 'tool_use', name: 'bash', input: { command: 'sleep 200' } },
      ],
    });
    const done = makeHarness({ hands: memoryHands({ provision: () => Promise.resolve(slow) }) }).wake(id);
    await waitForEvent(id, 'span.model_request_end');
    await new Promise((r) => setTimeout(r, 50));
    await store.emitEvent(id, { type: 'user.interrupt' });
    await done;

    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(aborted).toHaveLength(2);
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results).toHaveLength(2);
    for (const r of results) expect(r).toMatchObject({ is_error: true, content: [{ text: expect.stringContaining('interrupted') as unknown }] });
    expect(messages()).toHaveLength(1); // the brain is not asked again after an interrupt
  });

  const transient: Array<[string, ScriptedResponse, string]> = [
    ['529 overloaded', errorResponse(529), 'model_overloaded_error'],
    ['429 rate limited', errorResponse(429), 'model_rate_limited_error'],
    ['500 server error', errorResponse(500), 'model_request_failed_error'],
    ['a stream cut mid-way', { kind: 'drop', steps: [{ kind: 'text', text: 'partial answer that never ends' }], afterSteps: 1 }, 'model_request_failed_error'],
    ['an overload reported mid-stream', { kind: 'error', status: 529, midStream: true }, 'model_overloaded_error'],
  ];
  for (const [what, failure] of transient) {
    it(`retries after ${what}, recording the attempt as rescheduled, then answers`, async () => {
      const id = await sessionWith('hello', failure, textResponse('recovered'));
      await makeHarness().wake(id);
      const events = await store.getEvents(id);
      assertWellFormed(events);
      expect(types(events)).toEqual([
        'user.message',
        'session.status_running',
        'span.model_request_start',
        'span.model_request_end',
        'session.status_rescheduled',
        'session.status_running',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
      expect(events[3]).toMatchObject({ is_error: true });
      expect(events[4]).toMatchObject({ attempt: 1 });
      expect(events.filter((e) => e.type === 'agent.message')).toHaveLength(1); // nothing half-written
      expect(messages()).toHaveLength(2);
    });
  }

  for (const [what, failure, errorType] of transient) {
    it(`gives up after the last retry of ${what}: session.error and idle with retries_exhausted`, async () => {
      const id = await sessionWith('hello', failure, failure, failure, textResponse('never asked'));
      await makeHarness({ maxRetries: 2 }).wake(id);
      const events = await store.getEvents(id);
      assertWellFormed(events);
      expect(types(events).filter((t) => t === 'session.status_rescheduled')).toHaveLength(2);
      expect(events.at(-2)).toMatchObject({ type: 'session.error', error: { type: errorType, retry_status: { type: 'exhausted' } } });
      expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' } });
      expect(types(events)).not.toContain('agent.message');
      expect(messages()).toHaveLength(3);
    });
  }

  it('does not retry a request the API rejects as invalid (400)', async () => {
    const id = await sessionWith('hello', errorResponse(400, 'messages: bad'), textResponse('never asked'));
    await makeHarness().wake(id);
    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(events.at(-2)).toMatchObject({ type: 'session.error', error: { type: 'model_request_failed_error', retry_status: { type: 'terminal' } } });
    expect(messages()).toHaveLength(1);
  });

  it('a new user message after retries ran out starts a fresh turn', async () => {
    const id = await sessionWith('hello', errorResponse(400));
    await makeHarness().wake(id);
    fake.enqueue(textResponse('back'));
    await store.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'again' }] });
    await makeHarness().wake(id);
    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(events.filter((e) => e.type === 'agent.message')).toMatchObject([{ content: [{ text: 'back' }] }]);
  });
});

describe('wake() after a crash', () => {
  async function seed(events: NewEvent[]): Promise<string> {
    const s = await store.createSession({});
    await store.emitEvents(s.id, events);
    return s.id;
  }

  it('re-asks a turn whose answer was never stored', async () => {
    const id = await seed([
      { type: 'user.message', content: [{ type: 'text', text: 'q' }] },
      { type: 'session.status_running' },
      { type: 'span.model_request_start', model: 'claude-fake-test' },
    ]);
    fake.enqueue(textResponse('answer'));
    await makeHarness().wake(id);
    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(messages()).toHaveLength(1);
    expect(types(events).slice(3)).toEqual(['span.model_request_start', 'agent.message', 'span.model_request_end', 'session.status_idle']);
  });

  it('never re-asks an answered turn: runs only the pending tool call, then continues', async () => {
    const s = await sessionWithPendingCall({ file_path: 'a', content: 'x' }, 'toolu_1');
    fake.enqueue(textResponse('finished'));
    await makeHarness().wake(s.id);
    const events = await store.getEvents(s.id);
    assertWellFormed(events);
    expect(messages()).toHaveLength(1); // only the follow-up turn
    expect(JSON.stringify(messages()[0]!.body!.messages)).toContain('"tool_use_id":"toolu_1"');
  });

  it("runs a pending call stored with Paddock's old input names (a session resumed after the rename) on the hand", async () => {
    const s = await sessionWithPendingCall({ path: 'old.md', content: 'kept' }, 'toolu_old');
    fake.enqueue(textResponse('finished'));
    await makeHarness().wake(s.id);
    const events = await store.getEvents(s.id);
    assertWellFormed(events);
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'wrote 4 bytes to old.md' }] });
    expect(result).not.toMatchObject({ is_error: true });
  });

  it('two harnesses waking one session at once produce one answer per turn and one result per call', async () => {
    const id = await sessionWith('race', toolUseResponse('write', { file_path: 'a', content: 'x' }), textResponse('ok'));
    const a = makeHarness();
    const b = makeHarness();
    await Promise.all([a.wake(id), b.wake(id), a.wake(id), b.wake(id)]);
    const events = await store.getEvents(id);
    assertWellFormed(events);
    expect(messages()).toHaveLength(2);
    expect(events.filter((e) => e.type === 'agent.tool_result')).toHaveLength(1);
  });
});

describe('the sweeper', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('leaves work just stored to the instance that stored it for one tick, then takes it', async () => {
    const id = await sessionWith('hello', textResponse('swept'));
    const stop = makeHarness().startSweeper(1_000);
    try {
      // The first tick saw the message unclaimed: the instance that stored it gets to wake it.
      await sleep(300);
      expect(messages()).toHaveLength(0);
      // Nobody did by the next tick: it was left behind, and this harness answers it.
      await waitForEvent(id, 'session.status_idle');
      expect(messages()).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('takes a session whose harness let its lease expire at once', async () => {
    const id = await sessionWith('hello', textResponse('taken over'));
    expect(await store.acquireLease(id, 'dead-harness', 20)).not.toBeNull();
    await sleep(50);
    const stop = makeHarness().startSweeper(1_000);
    try {
      await sleep(300);
      expect(messages()).toHaveLength(1);
      await waitForEvent(id, 'session.status_idle');
    } finally {
      stop();
    }
  });

  it('prunes the claims of answered calls on its first tick', async () => {
    const s = await store.createSession({});
    const call = await store.emitEvent(s.id, { type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', hand: 'browser-1' });
    await store.claimCall(s.id, call.id, 'tab-a');
    await store.emitEvent(s.id, { type: 'user.tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'ok' }] }, { idempotencyKey: call.id });
    const stop = makeHarness().startSweeper(1_000);
    try {
      const end = Date.now() + 2_000;
      while ((await store.callClaim(s.id, call.id)) !== null && Date.now() < end) await sleep(20);
      expect(await store.callClaim(s.id, call.id)).toBeNull();
    } finally {
      stop();
    }
  });

  it('never runs a terminated session again: a message after its end is refused, one before it is left, and no wake or sweep asks the model', async () => {
    const id = await sessionWith('hello', textResponse('done'));
    const h = makeHarness();
    await h.wake(id);
    expect(messages()).toHaveLength(1);
    await store.emitEvent(id, { type: 'session.status_terminated' });
    fake.enqueue(textResponse('answered after the end'), textResponse('answered after the end'));
    const seq = (await store.getSession(id))!.last_seq;
    await expect(store.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'still there?' }] })).rejects.toThrow(`session ${id} is terminated`);
    expect((await store.getSession(id))!.last_seq).toBe(seq);
    // A message stored with the end (the same batch, just before it) asks nothing either.
    const late = (await store.createSession({})).id;
    await store.emitEvents(late, [{ type: 'user.message', content: [{ type: 'text', text: 'q' }] }, { type: 'session.status_terminated' }]);
    await h.wake(id);
    await h.wake(late);
    expect(await store.sessionsNeedingWork(10)).toEqual([]);
    const stop = h.startSweeper(100);
    try {
      await sleep(400);
    } finally {
      stop();
    }
    expect(messages()).toHaveLength(1);
    expect(types(await store.getEvents(late))).toEqual(['user.message', 'session.status_terminated']);
    expect((await store.getEvents(id)).at(-1)).toMatchObject({ type: 'session.status_terminated' });
  });

  it('stops waking a session whose log asks for nothing: an interrupt sent to an idle session', async () => {
    const id = await sessionWith('hello', textResponse('done'));
    await makeHarness().wake(id);
    await store.emitEvent(id, { type: 'user.interrupt' });
    expect((await store.sessionsNeedingWork(10)).map((w) => w.id)).toEqual([id]);
    await makeHarness().wake(id);
    expect(await store.sessionsNeedingWork(10)).toEqual([]);
    expect(messages()).toHaveLength(1);
  });

  it("runs a session on its agent's model, system prompt and tools; waits for the user on a call that asks and for the client on a custom tool", async () => {
    const agent = {
      id: 'agent_t', type: 'agent' as const, version: 2, name: 't', description: null, model: { id: 'claude-agent-model' }, system: 'You are the test agent.',
      tools: normalizeTools([{ type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }, { name: 'grep', enabled: false }] }, { type: 'custom', name: 'lookup', description: 'Look up a thing', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }]),
      mcp_servers: [], skills: [] as [], execution_identity: null, multiagent: null,
    };
    fake.enqueue(toolUseResponse('write', { file_path: 'x', content: 'y' }, { id: 'toolu_ask' }), toolUseResponse('lookup', { q: 'a' }, { id: 'toolu_custom' }), toolUseResponse('grep', { pattern: 'a' }, { id: 'toolu_off' }), textResponse('ok'));
    const s = await store.createSession({ agent });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    await makeHarness().wake(s.id);
    const first = messages()[0]!.body!;
    expect(first.model).toBe('claude-agent-model');
    expect((await store.getEvents(s.id, { types: ['span.model_request_start'] }))[0]).toMatchObject({ model: 'claude-agent-model' });
    expect(JSON.stringify(first.system)).toContain('You are the test agent.');
    const names = (first.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain('write');
    expect(names).toContain('lookup');
    expect(names).not.toContain('grep');
    const last = async () => (await store.getEvents(s.id, { from: -1 }))[0]!;
    const ofType = async <T extends StoredEvent['type']>(type: T) => (await store.getEvents(s.id, { types: [type] })) as Extract<StoredEvent, { type: T }>[];

    // The write asks: the session idles naming the call, which has not run.
    const [asking] = await ofType('agent.tool_use');
    expect(asking).toMatchObject({ name: 'write', evaluated_permission: 'ask' });
    expect(await last()).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [asking!.id] } });
    expect(await ofType('agent.tool_result')).toEqual([]);

    // Allowed: it runs, and the model's next call is the custom tool, left to the client.
    await store.emitEvent(s.id, { type: 'user.tool_confirmation', tool_use_id: asking!.id, result: 'allow' });
    await makeHarness().wake(s.id);
    expect((await ofType('agent.tool_result'))[0]).toMatchObject({ tool_use_id: asking!.id });
    expect((await ofType('agent.tool_result'))[0]?.is_error).toBeFalsy();
    const [custom] = await ofType('agent.custom_tool_use');
    expect(custom).toMatchObject({ name: 'lookup', input: { q: 'a' } });
    expect(await last()).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [custom!.id] } });

    // The client answers; the model's call of a disabled tool is refused, never run; then it ends.
    await store.emitEvent(s.id, { type: 'user.custom_tool_result', custom_tool_use_id: custom!.id, content: [{ type: 'text', text: 'found it' }] });
    await makeHarness().wake(s.id);
    const third = messages()[2]!.body!;
    expect(JSON.stringify(third.messages)).toContain('found it');
    const results = await ofType('agent.tool_result');
    expect(results).toHaveLength(2);
    expect(results[1]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[1]!.content)).toMatch(/not allowed by the agent's permission policy/);
    expect(await last()).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  });
});
