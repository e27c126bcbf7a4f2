/**
 * Scaling out on PostgreSQL: how fast another instance takes over a crashed one's session, wake()
 * of a 10k-event session on PostgreSQL, append throughput with 100 concurrent sessions on
 * PostgreSQL against the durable SQLite store, and how late live token output reaches a follower
 * on another instance.
 *
 * Part of `npm run bench` (the fourth table); alone:
 *   node --conditions=react-server --import tsx bench/scale.ts
 *
 * Needs a PostgreSQL server (PADDOCK_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432);
 * every run creates a fresh database and drops it at the end.
 *
 * Simulating a crash. Each "instance" is a Harness with its own store (its own pg pool and
 * LISTEN connection) and instanceId. Instance A's store is wrapped in a crash switch: once
 * thrown, every store call A makes (lease renewals and releases, appends, reads, sweeps) returns
 * a promise that never settles and never reaches the database, exactly like a process that has
 * died mid-flight, and A's sweeper is stopped. Nothing is released: the lease simply stops being
 * renewed and runs out. `harness.close()` would release the lease, so it is called only at
 * teardown, after the measurement, with the dead calls then failing so A can unwind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { abortReason, sleep } from '~/lib/sleep';
import { userMessage } from '~/bench/fixtures';
import { percentile, ratePerSecond } from '~/bench/stats';
import { type Row, Rows, ms, perSec, runIfMain } from '~/bench/table';
import { TimingModel } from '~/bench/timing-model';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient, ModelTurn } from '~/server/harness/core/model-client';
import { openPgNotifier } from '~/server/session/pg-notifier';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { createTestDatabase } from '~/server/session/testing/pg-test-db';

process.env.PADDOCK_LOG_LEVEL ??= 'warn';

// ── parameters ─────────────────────────────────────────────────────────────────────────────────
const LEASE_TTLS_MS = [1_000, 3_000];
const SWEEP_MS = 250;
const CRASH_RUNS = 10;
const CONCURRENT_SESSIONS = 100;
const CONCURRENT_EACH = 50;
const RELAY_DELTAS = 2_000;
const RELAY_PACE_MS = 2;


// ── models ─────────────────────────────────────────────────────────────────────────────────────


/** Never answers (until aborted): the model request instance A is in when it crashes. */
class HangingModel implements ModelClient {
  readonly label = 'bench-hang';
  readonly model = 'bench-model';
  readonly isDemo = false;
  called = false;

  stream(_request: unknown, opts: { signal: AbortSignal }): Promise<ModelTurn> {
    this.called = true;
    return new Promise((_, reject) => {
      if (opts.signal.aborted) reject(abortReason(opts.signal));
      else opts.signal.addEventListener('abort', () => reject(abortReason(opts.signal)), { once: true });
    });
  }
}

// ── crash switch ───────────────────────────────────────────────────────────────────────────────
/**
 * Wraps a store so that, after `crash()`, no call reaches the database: each returns a promise
 * that never settles (a dead process's I/O). `bury()` (teardown only) fails them all, and every
 * later call, so the abandoned harness can unwind and be closed. `follow` (read-only, aborted by
 * the harness's own signal) and `close` pass through.
 */
class CrashSwitch {
  crashed = false;
  private buried = false;
  private readonly dead: ((e: Error) => void)[] = [];

  wrap(store: SessionStore): SessionStore {
    return new Proxy(store, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => unknown;
        if (prop === 'close' || prop === 'follow') return fn.bind(target);
        return (...args: unknown[]) => {
          if (!this.crashed) return fn.apply(target, args);
          if (this.buried) return Promise.reject(new Error('instance crashed'));
          return new Promise((_, reject) => this.dead.push(reject));
        };
      },
    });
  }

  crash(): void {
    this.crashed = true;
  }

  bury(): void {
    this.buried = true;
    for (const reject of this.dead.splice(0)) reject(new Error('instance crashed'));
  }
}

function makeHarness(store: SessionStore, model: ModelClient, instanceId: string, leaseTtlMs: number): Harness {
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  return new Harness({ store, model, hands, live, leaseTtlMs, instanceId });
}

async function until(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(5);
  }
}

/**
 * One crash → takeover sample per run: a fresh instance A starts the session and hangs in its
 * model request; A crashes; the time until instance B's model is called for that session.
 */
async function crashTakeover(url: string, leaseTtlMs: number): Promise<number[]> {
  const storeB = await openPostgresStore({ url });
  const modelB = new TimingModel();
  const harnessB = makeHarness(storeB, modelB, `bench-b-${leaseTtlMs}`, leaseTtlMs);
  const stopB = harnessB.startSweeper(SWEEP_MS);
  const samples: number[] = [];
  let attempts = 0;
  try {
    while (samples.length < CRASH_RUNS) {
      if (++attempts > CRASH_RUNS * 2) throw new Error('crash takeover: too many runs started on B instead of A');
      const tag = `run-${leaseTtlMs}-${attempts}`;
      const realA = await openPostgresStore({ url });
      const crashA = new CrashSwitch();
      const storeA = crashA.wrap(realA);
      const modelA = new HangingModel();
      const harnessA = makeHarness(storeA, modelA, `bench-a-${tag}`, leaseTtlMs);
      const stopA = harnessA.startSweeper(SWEEP_MS);
      try {
        const s = await storeA.createSession({ title: `crash ${tag}` });
        await storeA.emitEvent(s.id, userMessage(`[${tag}] Fix the reader and re-run the tests.`));
        void harnessA.wake(s.id);
        // A calls its model only after span.model_request_start is stored (the emit has resolved).
        await until(() => modelA.called || modelB.byTag.has(tag), 10_000, `${tag}: model request on A`);
        if (modelB.byTag.has(tag)) continue; // B's sweeper won the race to the fresh session: not a takeover, redo
        const last = (await storeB.getEvents(s.id, { from: -1 }))[0];
        if (last?.type !== 'span.model_request_start') throw new Error(`${tag}: log ends in ${last?.type ?? 'nothing'}, wanted span.model_request_start`);

        // Crash: A's timers keep firing but nothing reaches the database any more.
        crashA.crash();
        const t0 = performance.now();
        stopA();
        await until(() => modelB.byTag.has(tag), leaseTtlMs + 10_000, `${tag}: model request on B`);
        samples.push(modelB.byTag.get(tag)! - t0);
        await until(async () => (await storeB.getSession(s.id))?.status === 'idle', 10_000, `${tag}: session idle on B`);
      } finally {
        stopA();
        // Teardown of the dead instance: let its pending calls fail quietly, then close it.
        const level = process.env.PADDOCK_LOG_LEVEL;
        process.env.PADDOCK_LOG_LEVEL = 'silent';
        try {
          crashA.bury();
          await harnessA.close();
          await realA.close();
        } finally {
          process.env.PADDOCK_LOG_LEVEL = level;
        }
      }
    }
  } finally {
    stopB();
    await harnessB.close();
    await storeB.close();
  }
  return samples;
}

/** `appends` single-event emitEvent calls per session, sequential within each, sessions concurrent. */
async function concurrentAppends(store: SessionStore, label: string): Promise<number> {
  const warm = await store.createSession({ title: `${label} warm-up` });
  for (let i = 0; i < 100; i++) await store.emitEvent(warm.id, userMessage(`warm ${i}`));
  const sessions = await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, i) => store.createSession({ title: `${label} ${i}` })));
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async (sess) => {
      for (let i = 0; i < CONCURRENT_EACH; i++) await store.emitEvent(sess.id, userMessage(`event ${i}`));
    }),
  );
  const elapsed = performance.now() - t0;
  for (const sess of sessions.slice(0, 3)) {
    const got = await store.getSession(sess.id);
    if (got?.last_seq !== CONCURRENT_EACH) throw new Error(`${label}: session has last_seq ${got?.last_seq ?? '?'}, wanted ${CONCURRENT_EACH}`);
  }
  return ratePerSecond(CONCURRENT_SESSIONS * CONCURRENT_EACH, elapsed);
}

export async function runScaleBench(): Promise<Row[]> {
  const table = new Rows();
  const db = await createTestDatabase('paddock_bench_scale');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-scale-'));
  try {
    // 1. Crash → next model request on another instance.
    for (const ttl of LEASE_TTLS_MS) {
      const samples = await crashTakeover(db.url, ttl);
      const expected = ttl + SWEEP_MS;
      const p50 = percentile(samples, 50);
      const label = `crash → model request on other instance, lease ${ttl / 1000} s, sweep ${SWEEP_MS} ms`;
      table.add(`${label}, p50 of ${CRASH_RUNS}`, ms(p50), `≤ ${ms(expected)} (TTL + sweep)`, p50 <= expected);
      table.add(`${label}, max of ${CRASH_RUNS}`, ms(Math.max(...samples)));
    }

    // 2. wake() on PostgreSQL: the wake part (wake.ts), at 1k, 10k and 100k events.

    // 3. Appends/s with 100 concurrent sessions: PostgreSQL vs SQLite.
    {
      const label = `throughput, ${CONCURRENT_SESSIONS} sessions (${CONCURRENT_SESSIONS}×${CONCURRENT_EACH} concurrent)`;
      const pgStore = await openPostgresStore({ url: db.url });
      try {
        const rate = await concurrentAppends(pgStore, 'pg');
        table.add(`${label}, PostgreSQL`, perSec(rate), '≥ 5,000 ev/s', rate >= 5_000);
      } finally {
        await pgStore.close();
      }
      const sqliteStore = await openSqliteStore({ file: path.join(dir, 'scale.sqlite') });
      try {
        const rate = await concurrentAppends(sqliteStore, 'sqlite');
        table.add(`${label}, SQLite`, perSec(rate), '≥ 10,000 ev/s', rate >= 10_000);
      } finally {
        await sqliteStore.close();
      }
    }

    // 4. Live token output relayed to a follower on another instance (LISTEN/NOTIFY).
    {
      const [sent, got] = await Promise.all([openPgNotifier({ url: db.url, sweepMs: 0 }), openPgNotifier({ url: db.url, sweepMs: 0 })]);
      try {
        const sentAt: number[] = [];
        const latencies: number[] = [];
        const all = new Promise<void>((resolve) =>
          got.subscribeLive((d) => {
            if (d.kind !== 'text') return;
            // Tokens queued during a send arrive merged: each one's latency is counted.
            const now = performance.now();
            for (const [, i] of d.text.matchAll(/ tok(\d+)/g)) latencies.push(now - sentAt[Number(i)]!);
            if (latencies.length === RELAY_DELTAS) resolve();
          }),
        );
        for (let i = 0; i < RELAY_DELTAS; i++) {
          const text = ` tok${i}`;
          sentAt[i] = performance.now();
          sent.publishLive({ kind: 'text', session_id: 'sesn_bench', model_request_start_id: 'sevt_bench', index: 0, text });
          // About the pace Claude streams tokens at.
          if (i % 10 === 9) await sleep(RELAY_PACE_MS * 10);
        }
        await all;
        const p95 = percentile(latencies, 95);
        const label = `live delta relayed to another instance, ${RELAY_DELTAS} deltas at ~${1000 / RELAY_PACE_MS}/s`;
        table.add(`${label}, p50`, ms(percentile(latencies, 50)));
        table.add(`${label}, p95`, ms(p95), '≤ 50 ms', p95 <= 50);
        table.add(`${label}, max`, ms(Math.max(...latencies)));
      } finally {
        await sent.close();
        await got.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
  return table.rows;
}

runIfMain(import.meta.url, runScaleBench);
