import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeTab } from '~/server/hands/testing/fake-tab';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import type { Runtime } from '~/server/runtime';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { testRuntime } from '~/server/harness/testing/test-runtime';

/**
 * A browser hand's tabs and claims live in the store, so the tab's requests may reach one server
 * instance while the harness runs on another, and a restarted server keeps using a tab that kept
 * beating: the tab is a hand that outlives brains too.
 */
let fake: FakeMessagesApi;
let dir: string;
const runtimes: Runtime[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  fake = await startFakeMessagesApi();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-tab-instances-'));
});

afterEach(async () => {
  for (const rt of runtimes.splice(0)) await stop(rt);
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  fake.reset();
});

afterAll(async () => {
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One server instance: its own registry, harness and store connection. */
function instance(store: SessionStore): Runtime {
  const rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    hands: { browserTimeouts: { heartbeatTimeoutMs: 1_000, claimTimeoutMs: 3_000 } },
  });
  runtimes.push(rt);
  return rt;
}

async function stop(rt: Runtime): Promise<void> {
  const i = runtimes.indexOf(rt);
  if (i >= 0) runtimes.splice(i, 1);
  await rt.harness.close();
  await rt.hands.closeAll();
  await rt.store.close();
}

const ran = (e: { id: string }) => `ran ${e.id}\nexit code: 0`;

describe('browser hands across server instances', () => {
  it('runs a call through a tab whose requests reach instance X while the harness runs on instance Y (PostgreSQL)', async () => {
    const db: TestDatabase = await createTestDatabase('paddock_tabs');
    cleanups.push(() => db.drop());
    const x = instance(await openPostgresStore({ url: db.url }));
    const y = instance(await openPostgresStore({ url: db.url }));
    fake.enqueue(toolUseResponse('bash', { command: 'node a.js' }), toolUseResponse('bash', { command: 'node b.js' }), textResponse('done'));
    const s = await x.store.createSession({});
    const tab = fakeTab(() => x, s.id, 'tab-xxxxxxxx', ran);
    await tab.ready;
    await x.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    await y.harness.wake(s.id);
    await tab.close();

    const log = await y.store.getEvents(s.id);
    expect(checkLogInvariants(log)).toEqual([]);
    const uses = log.filter((e) => e.type === 'agent.tool_use');
    expect(uses.map((u) => u.hand)).toEqual(['browser-1', 'browser-1']);
    expect(tab.ran).toEqual(uses.map((u) => u.id));
    for (const u of uses) {
      expect(log.filter((e) => (e.type === 'user.tool_result' || e.type === 'agent.tool_result') && e.tool_use_id === u.id)).toMatchObject([{ type: 'user.tool_result', content: [{ text: ran(u) }] }]);
    }
    expect(log.filter((e) => e.type.startsWith('hand.')).map((e) => e.type)).toEqual(['hand.provisioned']);
    expect(log.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  });

  it('keeps a browser hand through a server restart while its tab keeps beating, and loses it once the tab stops', async () => {
    const file = path.join(dir, 'restart.sqlite');
    let current = instance(await openSqliteStore({ file }));
    fake.enqueue(toolUseResponse('bash', { command: 'node a.js' }), textResponse('first done'));
    const s = await current.store.createSession({});
    const tab = fakeTab(() => current, s.id, 'tab-rrrrrrrr', ran);
    await tab.ready;
    await current.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'one' }] });
    await current.harness.wake(s.id);

    // The server restarts; the tab's next heartbeats reach the new process.
    await stop(current);
    current = instance(await openSqliteStore({ file }));
    fake.enqueue(toolUseResponse('bash', { command: 'node b.js' }), textResponse('second done'));
    await current.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'two' }] });
    await current.harness.wake(s.id);

    let log = await current.store.getEvents(s.id);
    expect(checkLogInvariants(log)).toEqual([]);
    const uses = log.filter((e) => e.type === 'agent.tool_use');
    expect(uses.map((u) => u.hand)).toEqual(['browser-1', 'browser-1']);
    expect(tab.ran).toEqual(uses.map((u) => u.id));
    expect(log.filter((e) => e.type.startsWith('hand.')).map((e) => e.type)).toEqual(['hand.provisioned']);

    // The tab closes: after the heartbeat timeout the hand is reported lost, by whichever instance looks.
    await tab.close();
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && !log.some((e) => e.type === 'hand.lost')) {
      await new Promise((r) => setTimeout(r, 100));
      log = await current.store.getEvents(s.id);
    }
    expect(log.filter((e) => e.type === 'hand.lost')).toMatchObject([{ hand: 'browser-1', reason: expect.stringContaining('no live browser tab') as unknown }]);
  });
});
