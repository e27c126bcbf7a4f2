import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * Two Paddock instances on one PostgreSQL serve one work queue: two workers, each polling through
 * its own instance with several polls in flight, together claim every item exactly once.
 */
const KEY = 'pdk_work_pg_key_0123456789';
let db: TestDatabase;
let dir: string;
const stores: PostgresSessionStore[] = [];
const runtimes: Runtime[] = [];
const servers: FetchServer[] = [];

beforeAll(async () => {
  db = await createTestDatabase('paddock_work_queue');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-work-pg-'));
  for (let i = 0; i < 2; i++) {
    const store = await openPostgresStore({ url: db.url });
    stores.push(store);
    const rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
    runtimes.push(rt);
    servers.push(await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 64 * 1024 })));
  }
  await runtimes[0]!.agents.ensureDefaults();
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const rt of runtimes) await rt.harness.close();
  for (const s of stores) await s.close();
  await db?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('two instances on PostgreSQL and two workers claim every item exactly once', { timeout: 120_000 }, async () => {
  const [a, b] = runtimes as [Runtime, Runtime];
  const env = await a.agents.createEnvironment({ name: 'fleet', config: { type: 'self_hosted' } });
  const key = (await a.work.createKey(env.id, { name: 'fleet' })).key;
  const N = 60;
  const sessions = [];
  for (let i = 0; i < N; i++) sessions.push((await a.store.createSession({ title: `s${i}`, environment_id: env.id })).id);
  // Items are queued on both instances, as their harnesses would (and twice for some sessions: still one item each).
  await Promise.all(sessions.map((s, i) => (i % 2 === 0 ? a : b).work.needWorker(s, env.id)));
  await Promise.all(sessions.slice(0, 10).map((s) => b.work.needWorker(s, env.id)));
  expect(await a.work.stats(env.id)).toMatchObject({ depth: N, pending: 0 });

  const claims = new Map<string, string[]>();
  const secrets = new Map<string, string>();
  const refusedAcks: string[] = [];
  const worker = async (name: string, server: FetchServer, polls: number) => {
    const client = new Anthropic({ apiKey: null, authToken: key, baseURL: server.url, maxRetries: 0 });
    const poller = async (p: number) => {
      for (let empty = 0; empty < 3; ) {
        const item = await client.beta.environments.work.poll(env.id, { block_ms: 100, 'Anthropic-Worker-ID': `${name}-${p}` });
        if (!item) {
          empty++;
          continue;
        }
        empty = 0;
        claims.set(item.id, [...(claims.get(item.id) ?? []), `${name}-${p}`]);
        secrets.set(item.id, item.secret!);
        try {
          await client.beta.environments.work.ack(item.id, { environment_id: env.id });
        } catch (e) {
          refusedAcks.push(`${item.id} by ${name}-${p}: ${String(e)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: polls }, (_, p) => poller(p)));
  };
  await Promise.all([worker('w1', servers[0]!, 4), worker('w2', servers[1]!, 4)]);

  expect([...claims.values()].filter((by) => by.length !== 1)).toEqual([]);
  expect(claims.size).toBe(N);
  expect(refusedAcks).toEqual([]);
  const byWorker = new Set([...claims.values()].map((by) => by[0]!.split('-')[0]));
  expect(byWorker).toEqual(new Set(['w1', 'w2']));
  expect(await b.work.stats(env.id)).toMatchObject({ depth: 0, pending: 0, workers_polling: 8 });

  // A lease that runs out is found by both instances' sweeps at once, and lost exactly once.
  const [first, second] = [...claims.keys()];
  const token = (id: string) => (JSON.parse(Buffer.from(secrets.get(id)!, 'base64url').toString('utf8')) as { sessions_token: string }).sessions_token;
  const viaB = new Anthropic({ apiKey: null, authToken: token(first!), baseURL: servers[1]!.url, maxRetries: 0 });
  const beat = await viaB.beta.environments.work.heartbeat(first!, { environment_id: env.id, expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: 1 });
  expect(beat).toMatchObject({ lease_extended: true, ttl_seconds: 1 });
  const viaA = new Anthropic({ apiKey: null, authToken: token(second!), baseURL: servers[0]!.url, maxRetries: 0 });
  expect(await viaA.beta.environments.work.stop(second!, { environment_id: env.id, force: true })).toMatchObject({ state: 'stopped' });
  await new Promise((r) => setTimeout(r, 1_200));
  const swept = await Promise.all([a.work.sweepLost(), b.work.sweepLost(), a.work.sweepLost(), b.work.sweepLost()]);
  expect(swept.flat().map((w) => w.id)).toEqual([first]);
  const session = (await a.work.retrieve(env.id, first!)).data.id;
  expect((await a.store.getEvents(session)).filter((e) => e.type === 'hand.lost')).toHaveLength(1);
  await expect(viaB.beta.environments.work.heartbeat(first!, { environment_id: env.id, expected_last_heartbeat: beat.last_heartbeat })).rejects.toMatchObject({ status: 401 });
});
