/**
 * `npm run bench`: store and harness latencies on a durable temp-file SQLite store (WAL +
 * synchronous=FULL, exactly as `openSqliteStore` configures it). Prints a table; not a test.
 *
 * Runs as `node --conditions=react-server --import tsx bench/run.ts`: under the `react-server`
 * export condition `server-only` resolves to its empty module (as it does inside Next's server
 * bundles) instead of throwing, so the real server modules load unchanged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { percentile, ratePerSecond, summarize } from '~/bench/stats';
import { buildLog, userMessage } from '~/bench/fixtures';
import { Rows, ms, perSec, printTable } from '~/bench/table';
import { runBrowserBench } from '~/bench/browser';
import { runApiTurnBench } from '~/bench/api-turn';
import { runCrowdBench } from '~/bench/crowd';
import { runFilesBench } from '~/bench/files';
import { runWorkQueueBench } from '~/bench/workqueue';
import { runHandsBench } from '~/bench/hands';
import { runScaleBench } from '~/bench/scale';
import { runSoakBench } from '~/bench/soak';
import { runTtftBench } from '~/bench/ttft';
import { runLifecycleBench } from '~/bench/lifecycle';
import { runContextBench } from '~/bench/context';
import { runWakeBench } from '~/bench/wake';
import { runThreadsBench } from '~/bench/threads';

// The harness logs JSON lines to stderr; keep the run quiet unless asked otherwise.
process.env.PADDOCK_LOG_LEVEL ??= 'warn';

const APPEND_N = 2_000;
const THROUGHPUT_ONE_N = 5_000;
const CONCURRENT_SESSIONS = 100;
const CONCURRENT_EACH = 100;
const BIG_LOG = 10_000;
const READ_RUNS = 10;

const table = new Rows();
const row = (benchmark: string, result: string, goal?: string, ok?: boolean | null) => table.add(benchmark, result, goal, ok);


async function storePart(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-'));
  const file = path.join(dir, 'bench.sqlite');
  const store = await openSqliteStore({ file });
  try {
    const journal = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(store.db);
    const sync = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(store.db);
    const syncName = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][sync.rows[0]?.synchronous ?? -1] ?? '?';
    console.log(
      `paddock bench · node ${process.version} · ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}) · ${new Date().toISOString()}`,
    );
    console.log(`store: ${file} · journal_mode=${journal.rows[0]?.journal_mode ?? '?'} · synchronous=${syncName}`);

    // Warm up JIT, zod and the prepared-statement paths on a throwaway session.
    const warm = await store.createSession({ title: 'warm-up' });
    for (let i = 0; i < 200; i++) await store.emitEvent(warm.id, userMessage(`warm ${i}`));
    await store.getEvents(warm.id);

    // 1. Append latency.
    {
      const s = await store.createSession({ title: 'append latency' });
      const samples: number[] = [];
      for (let i = 0; i < APPEND_N; i++) {
        const event = userMessage(`hello ${i}`);
        const t0 = performance.now();
        await store.emitEvent(s.id, event);
        samples.push(performance.now() - t0);
      }
      const sum = summarize(samples);
      row(`append latency p50 (${APPEND_N.toLocaleString('en-US')} seq. emitEvent)`, ms(sum.p50), '≤ 2 ms', sum.p50 <= 2);
      row('append latency p99', ms(sum.p99));
      row('append latency mean', ms(sum.mean));
    }

    // 2. Throughput.
    {
      const s = await store.createSession({ title: 'throughput 1' });
      const t0 = performance.now();
      for (let i = 0; i < THROUGHPUT_ONE_N; i++) await store.emitEvent(s.id, userMessage(`event ${i}`));
      const rate = ratePerSecond(THROUGHPUT_ONE_N, performance.now() - t0);
      row(`throughput, 1 session (${THROUGHPUT_ONE_N.toLocaleString('en-US')} seq.)`, perSec(rate));

      const sessions = await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, i) => store.createSession({ title: `throughput ${i}` })));
      const t1 = performance.now();
      await Promise.all(
        sessions.map(async (sess) => {
          for (let i = 0; i < CONCURRENT_EACH; i++) await store.emitEvent(sess.id, userMessage(`event ${i}`));
        }),
      );
      const total = CONCURRENT_SESSIONS * CONCURRENT_EACH;
      const rate100 = ratePerSecond(total, performance.now() - t1);
      row(`throughput, ${CONCURRENT_SESSIONS} sessions (${CONCURRENT_SESSIONS}×${CONCURRENT_EACH} concurrent)`, perSec(rate100), '≥ 10,000 ev/s', rate100 >= 10_000);
    }

    // 3. Reading a 10k-event log.
    {
      const s = await store.createSession({ title: 'big log' });
      const b0 = performance.now();
      await buildLog(store, s.id, BIG_LOG);
      const buildMs = performance.now() - b0;
      const full: number[] = [];
      let count = 0;
      for (let i = 0; i < READ_RUNS; i++) {
        const t0 = performance.now();
        count = (await store.getEvents(s.id)).length;
        full.push(performance.now() - t0);
      }
      if (count !== BIG_LOG) throw new Error(`getEvents returned ${count} events, wanted ${BIG_LOG}`);
      const tail: number[] = [];
      for (let i = 0; i < READ_RUNS; i++) {
        const t0 = performance.now();
        count = (await store.getEvents(s.id, { from: -50 })).length;
        tail.push(performance.now() - t0);
      }
      if (count !== 50) throw new Error(`getEvents({from: -50}) returned ${count} events, wanted 50`);
      row(`build 10k-event log (emitEvents batches)`, ms(buildMs));
      const fullP50 = percentile(full, 50);
      row(`getEvents full 10k log, p50 of ${READ_RUNS}`, ms(fullP50), '≤ 20 ms', fullP50 <= 20);
      row(`getEvents tail {from: -50}, p50 of ${READ_RUNS}`, ms(percentile(tail, 50)));
    }

    // wake() against log length, with and without the checkpoint, on both stores: the wake part (wake.ts).
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }

  printTable(table.rows);
}

/** PADDOCK_BENCH_PARTS=store,wake,ttft,api,browser,scale,soak,hands,lifecycle,context,crowd,files,threads,workqueue (default: all) runs only some tables. */
const PARTS = ['store', 'wake', 'ttft', 'api', 'browser', 'scale', 'soak', 'hands', 'lifecycle', 'context', 'crowd', 'files', 'threads', 'workqueue'] as const;
type Part = (typeof PARTS)[number];

async function main(): Promise<void> {
  const asked = (process.env.PADDOCK_BENCH_PARTS ?? PARTS.join(',')).split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = asked.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`PADDOCK_BENCH_PARTS: unknown part ${unknown.join(', ')} (parts: ${PARTS.join(', ')})`);
  const started = performance.now();
  const runs: Record<Part, () => Promise<void>> = {
    store: storePart,
    wake: async () => printTable(await runWakeBench()),
    ttft: async () => printTable(await runTtftBench()),
    api: async () => printTable(await runApiTurnBench()),
    browser: async () => printTable(await runBrowserBench()),
    scale: async () => printTable(await runScaleBench()),
    soak: async () => printTable(await runSoakBench()),
    hands: async () => printTable(await runHandsBench()),
    lifecycle: async () => printTable(await runLifecycleBench()),
    context: () => Promise.resolve(printTable(runContextBench())),
    crowd: async () => printTable(await runCrowdBench()),
    files: async () => printTable(await runFilesBench()),
    threads: async () => printTable(await runThreadsBench()),
    workqueue: async () => printTable(await runWorkQueueBench()),
  };
  for (const part of PARTS) {
    if (!asked.includes(part)) continue;
    console.log('');
    const t = performance.now();
    await runs[part]();
    console.log(`${part} part ${((performance.now() - t) / 1000).toFixed(1)} s · total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
