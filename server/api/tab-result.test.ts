import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import type { ExecuteContext } from '~/lib/hand';
import { ANONYMOUS } from '~/server/access/access';
import { OWNER, PROGRAM } from '~/server/access/testing/callers';
import { createCaller } from '~/server/api/root';
import { MemoryHand } from '~/server/hands/memory-hand';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * A browser hand belongs to its session's owner: what a stranger, a program or another tab can
 * no longer do to it (each was possible before: attach a fake tab, win a claim, answer any call).
 */
let dir: string;
let rt: Runtime;
let fake: FakeMessagesApi;
/** Calls on the server-side hand wait here until a test lets them finish. */
let gate: { open: () => void; wait: Promise<void> };

function newGate() {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

/** A memory hand whose calls stay in flight until the gate opens: a long-running command. */
class SlowHand extends MemoryHand {
  override async execute(name: string, input: unknown, ctx: ExecuteContext): Promise<string> {
    await gate.wait;
    return super.execute(name, input, ctx);
  }
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-tab-result-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  gate = newGate();
  rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    hands: {
      provisioners: { memory: { provision: (id) => Promise.resolve(new SlowHand(id)) } },
      browserTimeouts: { heartbeatTimeoutMs: 5_000, claimTimeoutMs: 5_000, callTimeoutMs: 1_200 },
    },
  });
});

afterEach(async () => {
  gate.open();
  await rt.harness.close();
  await rt.hands.closeAll();
  await fake.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const owner = () => createCaller({ runtime: rt, caller: OWNER });

async function code(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TRPCError);
  return (e as TRPCError).code;
}

async function waitFor<T>(what: string, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const callOf = (sessionId: string) =>
  waitFor('the tool call', async () => (await rt.store.getEvents(sessionId, { types: ['agent.tool_use'] })).at(-1) as Extract<StoredEvent, { type: 'agent.tool_use' }> | undefined);

async function send(sessionId: string, text: string) {
  await owner().events.send({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text }] } });
}

describe('browser hands belong to their session owner', () => {
  it('refuses to attach a tab for a stranger or a program', async () => {
    const s = await owner().sessions.create({});
    const attach = (caller: typeof OWNER) => createCaller({ runtime: rt, caller }).hands.attachBrowser({ sessionId: s.id, tabId: 'tab-hijack01', engine: 'offline' });
    expect(await code(attach(ANONYMOUS))).toBe('UNAUTHORIZED');
    expect(await code(attach(PROGRAM))).toBe('FORBIDDEN');
    expect(await rt.store.getEvents(s.id)).toHaveLength(0);
  });

  it('refuses to attach a tab to a session that has ended or is archived', async () => {
    const ended = await owner().sessions.create({});
    await rt.store.emitEvent(ended.id, { type: 'session.status_terminated' });
    const archived = await owner().sessions.create({});
    await rt.store.updateSession(archived.id, { archived: true });
    for (const s of [ended, archived]) {
      expect(await code(owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-late0001', engine: 'offline' }))).toBe('CONFLICT');
      expect((await rt.store.getEvents(s.id)).filter((e) => e.type === 'hand.provisioned')).toHaveLength(0);
    }
  });

  it('refuses heartbeats and claims without the secret attach returned to that tab', async () => {
    fake.enqueue(toolUseResponse('read', { file_path: 'a.txt' }), textResponse('done'));
    const s = await owner().sessions.create({});
    const { hand, tabSecret } = await owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-owner001', engine: 'offline' });
    expect(await code(owner().hands.heartbeat({ sessionId: s.id, hand, tabId: 'tab-owner001', tabSecret: 'guess' }))).toBe('FORBIDDEN');
    // The owner tab's secret does not work for another tab id (a hijacker reusing a leaked pair).
    expect(await code(owner().hands.heartbeat({ sessionId: s.id, hand, tabId: 'tab-hijack01', tabSecret }))).toBe('FORBIDDEN');
    expect(await rt.store.liveTabs(s.id, hand, 60_000)).toEqual(['tab-owner001']);

    await send(s.id, 'go');
    const wake = rt.harness.wake(s.id);
    const use = await callOf(s.id);
    expect(await code(owner().hands.claim({ sessionId: s.id, hand, tabId: 'tab-hijack01', tabSecret, toolUseId: use.id }))).toBe('FORBIDDEN');
    expect(await rt.store.callClaim(s.id, use.id)).toBeNull();
    // The real tab still gets it, and answers.
    expect(await owner().hands.claim({ sessionId: s.id, hand, tabId: 'tab-owner001', tabSecret, toolUseId: use.id })).toEqual({ granted: true });
    await owner().hands.result({ sessionId: s.id, hand, tabId: 'tab-owner001', tabSecret, toolUseId: use.id, content: [{ type: 'text', text: 'real' }] });
    await wake;
  });

  it('refuses a forged result for a server-side call still running, and the model sees the real output', async () => {
    fake.enqueue(toolUseResponse('write', { file_path: 'x.txt', content: 'real output' }), textResponse('done'));
    const s = await owner().sessions.create({});
    // The brain's call runs on a server-side hand; then a tab of the forger's own joins the session.
    await send(s.id, 'go');
    const wake = rt.harness.wake(s.id);
    const use = await callOf(s.id);
    const tab = await owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-forger01', engine: 'offline' });

    const forged = { content: [{ type: 'text' as const, text: 'FORGED' }] };
    expect(await code(owner().events.send({ sessionId: s.id, event: { type: 'user.tool_result', tool_use_id: use.id, ...forged } } as never))).toBe('BAD_REQUEST');
    expect(await code(owner().hands.result({ sessionId: s.id, hand: tab.hand, tabId: 'tab-forger01', tabSecret: tab.tabSecret, toolUseId: use.id, ...forged }))).toBe('FORBIDDEN');
    expect(await code(owner().hands.result({ sessionId: s.id, hand: 'memory-1', tabId: 'tab-forger01', tabSecret: tab.tabSecret, toolUseId: use.id, ...forged }))).toBe('FORBIDDEN');

    gate.open();
    await wake;
    const events = await rt.store.getEvents(s.id);
    expect(JSON.stringify(events)).not.toContain('FORGED');
    expect(events.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: use.id, hand: 'memory-1', content: [{ type: 'text', text: expect.stringContaining('wrote') as unknown }] });
    expect(events.find((e) => e.type === 'agent.tool_result')).not.toHaveProperty('is_error', true);
    expect(JSON.stringify(fake.requests.at(-1)?.body?.messages)).not.toContain('FORGED');
  });

  it('accepts a result only from the tab that claimed the call, stores a retried answer once, and refuses one after the answer', async () => {
    fake.enqueue(toolUseResponse('read', { file_path: 'a.txt' }), textResponse('done'));
    const s = await owner().sessions.create({});
    const a = await owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-aaaaaaaa', engine: 'offline' });
    const b = await owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-bbbbbbbb', engine: 'offline' });
    expect(b.hand).toBe(a.hand);
    await send(s.id, 'go');
    const wake = rt.harness.wake(s.id);
    const use = await callOf(s.id);
    const answer = (tab: typeof a, tabId: string, text: string) =>
      owner().hands.result({ sessionId: s.id, hand: tab.hand, tabId, tabSecret: tab.tabSecret, toolUseId: use.id, content: [{ type: 'text', text }] });

    expect(await code(answer(b, 'tab-bbbbbbbb', 'before any claim'))).toBe('FORBIDDEN');
    expect(await owner().hands.claim({ sessionId: s.id, hand: a.hand, tabId: 'tab-aaaaaaaa', tabSecret: a.tabSecret, toolUseId: use.id })).toEqual({ granted: true });
    expect(await code(answer(b, 'tab-bbbbbbbb', 'not mine'))).toBe('FORBIDDEN');
    const first = await answer(a, 'tab-aaaaaaaa', 'the answer');
    // The tab retries when it lost the reply: the same stored event, not a second one.
    expect((await answer(a, 'tab-aaaaaaaa', 'the answer')).id).toBe(first.id);
    await wake;
    const results = (await rt.store.getEvents(s.id)).filter((e) => e.type === 'user.tool_result' || e.type === 'agent.tool_result');
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results)).not.toContain('not mine');
  });

  it('fails a claimed call whose tab never answers after the call deadline, naming the hand, and the session settles', async () => {
    fake.enqueue(toolUseResponse('read', { file_path: 'a.txt' }), textResponse('carried on'));
    const s = await owner().sessions.create({});
    const t = await owner().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-silent01', engine: 'offline' });
    const beat = setInterval(() => void owner().hands.heartbeat({ sessionId: s.id, hand: t.hand, tabId: 'tab-silent01', tabSecret: t.tabSecret }), 100);
    try {
      await send(s.id, 'go');
      const wake = rt.harness.wake(s.id);
      const use = await callOf(s.id);
      expect(await owner().hands.claim({ sessionId: s.id, hand: t.hand, tabId: 'tab-silent01', tabSecret: t.tabSecret, toolUseId: use.id })).toEqual({ granted: true });
      // The result POST is lost; the server must not wait for it forever.
      await wake;
      const events = await rt.store.getEvents(s.id);
      const result = events.find((e) => e.type === 'agent.tool_result');
      expect(result).toMatchObject({ is_error: true, tool_use_id: use.id });
      expect(JSON.stringify(result)).toMatch(/hand browser-1: the browser tab that took the call did not answer within 1 s/);
      expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
      // A late answer is refused: the call has its result.
      expect(await code(owner().hands.result({ sessionId: s.id, hand: t.hand, tabId: 'tab-silent01', tabSecret: t.tabSecret, toolUseId: use.id, content: [{ type: 'text', text: 'late' }] }))).toBe('CONFLICT');
    } finally {
      clearInterval(beat);
    }
  });
});
