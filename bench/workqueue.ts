import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import { percentile } from '~/bench/stats';
import { Rows, type Row, ms, runIfMain } from '~/bench/table';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * Issue 28's work queue on PostgreSQL (PADDOCK_TEST_DATABASE_URL, default the local server): how
 * long from a session needing a worker (the harness's `needWorker`, as its go_idle step calls it)
 * to a worker's poll through /v1 holding the item, with 10 workers long-polling as the SDK's do
 * (block_ms 999); the same when the item is queued on another instance than the one the workers
 * poll (no in-process wake-up: the poll's re-check); and items per second through one database
 * (poll, ack and stop per item, 10 workers).
 */
const KEY = 'pdk_bench_workqueue_0123456789';
const WORKERS = 10;
const LATENCY_ITEMS = Number(process.env.PADDOCK_BENCH_WORK_ITEMS ?? 200);
const THROUGHPUT_ITEMS = Number(process.env.PADDOCK_BENCH_WORK_THROUGHPUT ?? 2000);

interface Instance {
  rt: Runtime;
  store: PostgresSessionStore;
  server: FetchServer;
}

async function instance(url: string, dir: string): Promise<Instance> {
  const store = await openPostgresStore({ url });
  const rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 64 * 1024 }));
  return { rt, store, server };
}

/** `WORKERS` pollers through `server` until `stop`: each item is acked, stopped and reported. */
function pollers(server: FetchServer, envId: string, key: string, onItem: (id: string) => void, stop: AbortSignal): Promise<void> {
  const client = new Anthropic({ apiKey: null, authToken: key, baseURL: server.url, maxRetries: 0 });
  const one = async (w: number) => {
    while (!stop.aborted) {
      const item = await client.beta.environments.work.poll(envId, { block_ms: 999, 'Anthropic-Worker-ID': `bench-${w}` }, { signal: stop }).catch((e: unknown) => (stop.aborted ? null : Promise.reject(e as Error)));
      if (!item) continue;
      onItem(item.id);
      await client.beta.environments.work.ack(item.id, { environment_id: envId });
      await client.beta.environments.work.stop(item.id, { environment_id: envId, force: true });
    }
  };
  return Promise.all(Array.from({ length: WORKERS }, (_, w) => one(w))).then(() => undefined);
}

async function latency(table: Rows, queueOn: Instance, pollOn: Instance, label: string): Promise<void> {
  const env = await queueOn.rt.agents.createEnvironment({ name: `bench ${label}`, config: { type: 'self_hosted' } });
  const key = (await queueOn.rt.work.createKey(env.id, {})).key;
  const sessions: string[] = [];
  for (let i = 0; i < LATENCY_ITEMS; i++) sessions.push((await queueOn.store.createSession({ title: `b${i}`, environment_id: env.id })).id);
  const queuedAt = new Map<string, number>();
  const got = new Map<string, number>();
  const stop = new AbortController();
  let arrived: (() => void) | null = null;
  const running = pollers(pollOn.server, env.id, key, (id) => {
    got.set(id, performance.now());
    arrived?.();
  }, stop.signal);
  // Let every worker's first poll block before the first item.
  await new Promise((r) => setTimeout(r, 1_200));
  for (const s of sessions) {
    const waiting = new Promise<void>((r) => (arrived = r));
    const t = performance.now();
    const item = await queueOn.rt.work.needWorker(s, env.id);
    queuedAt.set(item.id, t);
    await waiting;
    // A pause between items, so each one meets idle pollers, as a session's call would.
    await new Promise((r) => setTimeout(r, 5));
  }
  stop.abort();
  await running;
  const samples = [...queuedAt].map(([id, t]) => got.get(id)! - t);
  table.add(`work queue: needs a worker → a worker holds the item (${label}), p50 of ${samples.length}`, ms(percentile(samples, 50)));
  table.add(`  p95`, ms(percentile(samples, 95)));
}

async function throughput(table: Rows, a: Instance): Promise<void> {
  const env = await a.rt.agents.createEnvironment({ name: 'bench throughput', config: { type: 'self_hosted' } });
  const key = (await a.rt.work.createKey(env.id, {})).key;
  for (let i = 0; i < THROUGHPUT_ITEMS; i++) await a.rt.work.needWorker((await a.store.createSession({ title: `t${i}`, environment_id: env.id })).id, env.id);
  let done = 0;
  const stop = new AbortController();
  const t0 = performance.now();
  let finished: () => void = () => undefined;
  const all = new Promise<void>((r) => (finished = r));
  const running = pollers(a.server, env.id, key, () => {
    if (++done === THROUGHPUT_ITEMS) finished();
  }, stop.signal);
  await all;
  const elapsed = performance.now() - t0;
  stop.abort();
  await running;
  table.add(`work queue: items through one PostgreSQL (poll, ack, stop; ${WORKERS} workers, ${THROUGHPUT_ITEMS} items)`, `${Math.round((THROUGHPUT_ITEMS / elapsed) * 1000).toLocaleString('en-US')} items/s`);
}

export async function runWorkQueueBench(): Promise<Row[]> {
  const table = new Rows();
  const db = await createTestDatabase('paddock_bench_workqueue');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-workqueue-'));
  const a = await instance(db.url, dir);
  const b = await instance(db.url, dir);
  try {
    await a.rt.agents.ensureDefaults();
    await latency(table, a, a, 'one instance');
    await latency(table, a, b, 'queued on another instance');
    await throughput(table, a);
  } finally {
    for (const i of [a, b]) {
      await i.server.close();
      await i.rt.harness.close();
      await i.store.close();
    }
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  return table.rows;
}

runIfMain(import.meta.url, runWorkQueueBench);
