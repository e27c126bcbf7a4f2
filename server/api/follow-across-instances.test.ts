import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FollowItem, followWithDeltas } from '~/server/api/follow';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * Two server instances on one PostgreSQL: the harness runs on A while the browser follows through
 * B (a load balancer decides, not us). B's follower must see A's live token output, not only the
 * stored answer.
 */
let db: TestDatabase;
let fake: FakeMessagesApi;
let dir: string;
const stores: PostgresSessionStore[] = [];
let a: Runtime;
let b: Runtime;

beforeAll(async () => {
  db = await createTestDatabase('paddock_follow_x');
  fake = await startFakeMessagesApi();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-follow-x-'));
  const instance = async () => {
    const store = await openPostgresStore({ url: db.url });
    stores.push(store);
    return testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir });
  };
  a = await instance();
  b = await instance();
}, 60_000);

afterAll(async () => {
  await a?.harness.close();
  await b?.harness.close();
  for (const s of stores) await s.close();
  await fake?.close();
  await db?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('a browser following through one instance sees the live output of the harness on another', async () => {
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  fake.enqueue(textResponse(words, { chunks: 40, chunkDelayMs: 10 }));
  const session = await b.store.createSession({ title: 'across' });
  const ac = new AbortController();
  const items: FollowItem[] = [];
  const following = (async () => {
    for await (const item of followWithDeltas(b, session.id, 0, ac.signal)) {
      items.push(item);
      if (item.kind === 'event' && item.event.type === 'session.status_idle') ac.abort();
    }
  })();

  await a.store.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  await a.harness.wake(session.id);
  await following;

  const answerAt = items.findIndex((i) => i.kind === 'event' && i.event.type === 'agent.message');
  expect(answerAt).toBeGreaterThan(0);
  const deltas = items.flatMap((i, at) => (i.kind === 'delta' && i.delta.kind === 'text' ? [{ at, text: i.delta.text }] : []));
  // All of A's output reached B, in order, before the stored answer.
  expect(deltas.map((d) => d.text).join('')).toBe(words);
  expect(deltas.every((d) => d.at < answerAt)).toBe(true);
  expect(deltas.length).toBeGreaterThan(1);
}, 30_000);
