import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FollowItem, followWithDeltas } from '~/server/api/follow';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { RESTARTING_MESSAGE, resetStoppingSignal, stopRuntime } from '~/server/shutdown';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let rt: Runtime;
const KEY = 'shutdown-test-key-0123456789';

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-shutdown-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  rt = testRuntime({ store, dataDir: dir, env: { PADDOCK_API_KEY: KEY }, model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake' }), harness: { leaseTtlMs: 60_000 } });
  resetStoppingSignal();
});

afterEach(async () => {
  resetStoppingSignal();
  await rt.harness.close();
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('stopping the server', () => {
  it('cuts the running turn off and releases its lease, and ends live streams with a restarting notice', async () => {
    fake.enqueue({ kind: 'hang' });
    const s = await store.createSession({});
    const items: FollowItem[] = [];
    const following = (async () => {
      for await (const item of followWithDeltas(rt, s.id, 0, new AbortController().signal)) items.push(item);
    })();
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'think forever' }] });
    const turn = rt.harness.wake(s.id);
    const end = Date.now() + 5_000;
    while (!(await store.getEvents(s.id)).some((e) => e.type === 'span.model_request_start')) {
      if (Date.now() > end) throw new Error('the turn never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Held by the running turn: nobody else may take it.
    expect(await store.acquireLease(s.id, 'another-instance', 60_000)).toBeNull();

    const t0 = Date.now();
    await stopRuntime(rt);
    await following;
    await turn;
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(items.at(-1)).toEqual({ kind: 'restarting', message: RESTARTING_MESSAGE });
    expect(items.some((i) => i.kind === 'event' && i.event.type === 'user.message')).toBe(true);
    // Released, not left to expire: the next instance takes the session over at once.
    expect(await store.acquireLease(s.id, 'another-instance', 60_000)).not.toBeNull();
    // And this one starts no new turn.
    await rt.harness.wake(s.id);
    expect((await store.getEvents(s.id)).filter((e) => e.type === 'span.model_request_start')).toHaveLength(1);
  });

  it('ends a follow that starts after the stop at once, with the notice', async () => {
    const s = await store.createSession({});
    await stopRuntime(rt);
    const items: FollowItem[] = [];
    for await (const item of followWithDeltas(rt, s.id, 0, new AbortController().signal)) items.push(item);
    expect(items).toEqual([{ kind: 'restarting', message: RESTARTING_MESSAGE }]);
  });

  it("ends a /v1 event stream with an overloaded_error frame, which the SDK raises, so its caller reconnects", async () => {
    await rt.agents.ensureDefaults();
    const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 64 * 1024 }));
    try {
      const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
      const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
      const stream = await client.beta.sessions.events.stream(session.id);
      const reading = (async () => {
        for await (const e of stream) void e;
      })();
      await new Promise((r) => setTimeout(r, 100));
      await stopRuntime(rt);
      const err = await reading.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(String((err as Error).message)).toContain('restarting');
    } finally {
      await server.close();
    }
  });
});
