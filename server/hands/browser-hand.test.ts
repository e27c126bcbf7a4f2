import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { fakeTab } from '~/server/hands/testing/fake-tab';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { testRuntime } from '~/server/harness/testing/test-runtime';

/**
 * The browser-hand bridge through the session log, driven exactly as a tab drives it: through the
 * tRPC API (attach, heartbeat, claim, events.send user.tool_result) while following the log.
 */
let dir: string;
let rt: Runtime;
let fake: FakeMessagesApi;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-bridge-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    hands: { browserTimeouts: { heartbeatTimeoutMs: 600, claimTimeoutMs: 1_500 } },
  });
});

afterEach(async () => {
  await rt.harness.close();
  await rt.hands.closeAll();
  await fake.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const api = () => createCaller({ runtime: rt, caller: OWNER });

/** A fake tab on this test's runtime. */
const tab = (sessionId: string, tabId: string, run: (e: StoredEvent) => string) => fakeTab(() => rt, sessionId, tabId, run);

async function start(text: string): Promise<string> {
  const s = await api().sessions.create({});
  await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text }] } });
  return s.id;
}

describe('browser hand bridge', () => {
  it('a tab runs the calls addressed to its hand and its result is stored once', async () => {
    fake.enqueue(toolUseResponse('bash', { command: 'node hello.js' }), textResponse('done'));
    const s = await api().sessions.create({});
    const t = tab(s.id, 'tab-aaaaaaaa', (e) => `ran ${String((e as { input: { command?: string } }).input.command)}\nexit code: 0`);
    await t.ready;
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'go' }] } });
    await rt.harness.wake(s.id);
    await t.close();

    const events = await rt.store.getEvents(s.id);
    const use = events.find((e) => e.type === 'agent.tool_use');
    expect(use).toMatchObject({ hand: 'browser-1' });
    const results = events.filter((e) => (e.type === 'user.tool_result' || e.type === 'agent.tool_result') && e.tool_use_id === use!.id);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ type: 'user.tool_result', content: [{ text: 'ran node hello.js\nexit code: 0' }] });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
    expect(events.filter((e) => e.type === 'hand.provisioned')).toMatchObject([{ hand: 'browser-1', kind: 'browser' }]);
  });

  it('with two tabs open exactly one runs each call', async () => {
    fake.enqueue(
      { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'a' } }, { kind: 'tool_use', name: 'bash', input: { command: 'b' } }] },
      toolUseResponse('bash', { command: 'c' }),
      textResponse('done'),
    );
    const s = await api().sessions.create({});
    const one = tab(s.id, 'tab-11111111', () => 'one');
    const two = tab(s.id, 'tab-22222222', () => 'two');
    await Promise.all([one.ready, two.ready]);
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'go' }] } });
    await rt.harness.wake(s.id);
    await Promise.all([one.close(), two.close()]);

    expect(one.ran.length + two.ran.length).toBe(3);
    expect(new Set([...one.ran, ...two.ran]).size).toBe(3);
    const events = await rt.store.getEvents(s.id);
    expect(events.filter((e) => e.type === 'hand.provisioned')).toHaveLength(1); // both tabs share browser-1
    for (const use of events.filter((e) => e.type === 'agent.tool_use')) {
      expect(events.filter((e) => (e.type === 'user.tool_result' || e.type === 'agent.tool_result') && e.tool_use_id === use.id)).toHaveLength(1);
    }
  });

  it('when the tab goes away mid-call the call fails naming the hand, and the brain continues on another hand', async () => {
    fake.enqueue(
      toolUseResponse('bash', { command: 'sleep forever' }),
      toolUseResponse('provision', { kind: 'memory' }),
      toolUseResponse('write', { file_path: 'x.txt', content: 'saved' }),
      textResponse('continued elsewhere'),
    );
    const s = await api().sessions.create({});
    // A tab that claims the call, then is closed before answering.
    const { hand, tabSecret } = await api().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-closing1', engine: 'offline' });
    const ac = new AbortController();
    void (async () => {
      for await (const e of rt.store.follow(s.id, 0, ac.signal)) {
        if (e.type === 'agent.tool_use' && e.hand === hand) await api().hands.claim({ sessionId: s.id, hand, tabId: 'tab-closing1', tabSecret, toolUseId: e.id });
      }
    })().catch(() => undefined);
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'go' }] } });
    const t0 = Date.now();
    await rt.harness.wake(s.id);
    ac.abort();

    const events = await rt.store.getEvents(s.id);
    const first = events.find((e) => e.type === 'agent.tool_result');
    expect(first).toMatchObject({ is_error: true, hand: 'browser-1' });
    expect(JSON.stringify(first)).toMatch(/hand browser-1 was lost: no live browser tab/);
    expect(events.find((e) => e.type === 'hand.lost')).toMatchObject({ hand: 'browser-1' });
    expect(events.filter((e) => e.type === 'agent.tool_result').at(-1)).toMatchObject({ hand: 'memory-2', content: [{ text: expect.stringContaining('wrote') as unknown }] });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('a call nobody picks up fails after the claim timeout and the hand is lost', async () => {
    fake.enqueue(toolUseResponse('read', { file_path: 'a' }), textResponse('ok'));
    const s = await api().sessions.create({});
    const { hand, tabSecret } = await api().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-silent01', engine: 'offline' });
    // Heartbeats keep coming, but the tab never claims anything.
    const beat = setInterval(() => void api().hands.heartbeat({ sessionId: s.id, hand, tabId: 'tab-silent01', tabSecret }), 100);
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'go' }] } });
    await rt.harness.wake(s.id);
    clearInterval(beat);
    const events = await rt.store.getEvents(s.id);
    expect(JSON.stringify(events.find((e) => e.type === 'agent.tool_result'))).toMatch(/picked up the call within/);
    expect(await api().hands.heartbeat({ sessionId: s.id, hand, tabId: 'tab-silent01', tabSecret })).toEqual({ alive: false });
  });

  it('refuses a tool result sent as a plain event: results come from the tab that claimed the call', async () => {
    const s = await start('hi');
    await expect(api().events.send({ sessionId: s, event: { type: 'user.tool_result', tool_use_id: 'toolu_x', content: [] } } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
