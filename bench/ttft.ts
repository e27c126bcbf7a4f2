/**
 * Time to first token: a brain coupled to its hand (container-first: provision, then ask the
 * model) against Paddock's lazy hands (ask the model at once; a hand starts only when a tool call
 * needs one). Also: sandbox hand provisioning with and without a warm pool, and the harness's own
 * overhead from a stored `user.message` to the model request.
 *
 * Part of `npm run bench` (the second table); alone:
 *   node --conditions=react-server --import tsx bench/ttft.ts
 *
 * Everything runs on real parts: the durable SQLite store (temp file), the harness, the real
 * `@anthropic-ai/sdk` against the scripted fake Messages API over HTTP + SSE, and real
 * bubblewrap-sandboxed paddock-hand processes.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NewEvent } from '~/lib/events';
import { sleep } from '~/lib/sleep';
import { percentile } from '~/bench/stats';
import { type Row, Rows, ms, pct, runIfMain } from '~/bench/table';
import { TimingModel } from '~/bench/timing-model';
import { MemoryHand, createMemoryProvisioner } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { HandRegistry, type HandScope } from '~/server/hands/registry';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { mulberry32 } from '~/lib/prng';

process.env.PADDOCK_LOG_LEVEL ??= 'warn';

// ── parameters ─────────────────────────────────────────────────────────────────────────────────
const SESSIONS = 200;
const CONCURRENCY = 20;
/** The fake model's time to response headers; it then streams a one-word answer. */
const MODEL_DELAY_MS = 300;
/** Real sandbox starts: stop admitting new coupled sessions after this long (the label says n). */
const REAL_COUPLED_BUDGET_MS = 150_000;
/** Simulated container start: log-normal with median 2 s and p95 8 s. */
const SIM_MEDIAN_MS = 2_000;
const SIM_P95_MS = 8_000;
const SIM_SEED = 0x5eed_2026;
const RESOLVE_SAMPLES = 10;
const POOL_SIZE = 2;
const OVERHEAD_WARMUP = 50;
const OVERHEAD_SAMPLES = 500;

const userMessage = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });

// ── helpers ────────────────────────────────────────────────────────────────────────────────────


/** n log-normal samples (Box–Muller) with the given median and 95th percentile. */
function logNormalSamples(n: number, medianMs: number, p95Ms: number, seed: number): number[] {
  const rand = mulberry32(seed);
  const mu = Math.log(medianMs);
  const sigma = Math.log(p95Ms / medianMs) / 1.645;
  return Array.from({ length: n }, () => {
    const u1 = 1 - rand(); // (0, 1]: log(u1) is finite
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rand());
    return Math.exp(mu + sigma * z);
  });
}

/** Runs fn(0..n-1) with at most `limit` in flight; `admit` can stop new starts early. */
async function runLimited(n: number, limit: number, fn: (i: number) => Promise<void>, admit: () => boolean = () => true): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < n && admit()) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
  return next;
}

/** A provisioner standing in for a container platform: sleeps a seeded log-normal time. */
function simulatedContainerProvisioner(delaysMs: readonly number[]): Provisioner {
  let i = 0;
  return {
    async provision(handId, _spec, { signal }) {
      const delay = delaysMs[i++ % delaysMs.length]!;
      await sleep(delay, signal);
      return new MemoryHand(handId);
    },
  };
}

/** A scope appending without a fence, as a caller outside the harness loop would. */
function scopeFor(store: SessionStore, sessionId: string): HandScope {
  return {
    sessionId,
    signal: new AbortController().signal,
    emit: (event, key) => store.emitEvent(sessionId, event, { idempotencyKey: key }),
  };
}

/** Host pids of processes whose command line mentions `needle` (our temp dir). Zombies have none. */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function waitUntil(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

const secs = (x: number) => `${(x / 1000).toFixed(1)} s`;

// ── 1. TTFT, coupled vs lazy ───────────────────────────────────────────────────────────────────

type Mode = 'coupled' | 'lazy';

interface TtftRun {
  ttft: number[];
  wallMs: number;
}

/**
 * `SESSIONS` sessions, `CONCURRENCY` at a time. Each: create, subscribe to the live bus, store the
 * user.message (t0), then — coupled — provision the session's hand and only then wake, or — lazy —
 * wake at once. TTFT = first text delta at the subscriber − t0. The hand is released afterwards.
 */
async function ttftRun(o: {
  store: SessionStore;
  fake: FakeMessagesApi;
  provisioner: Provisioner;
  mode: Mode;
  sessions: number;
  budgetMs?: number;
}): Promise<TtftRun> {
  const { store, mode } = o;
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { sandbox: o.provisioner }, defaultKind: 'sandbox' });
  const model = createAnthropicModel({ apiKey: 'bench-key', baseURL: o.fake.url, model: 'claude-bench' });
  const harness = new Harness({ store, model, hands, live, leaseTtlMs: 60_000 });
  const ttft: number[] = [];
  const began = performance.now();
  const admit = () => o.budgetMs === undefined || performance.now() - began < o.budgetMs;
  try {
    await runLimited(
      o.sessions,
      CONCURRENCY,
      async (i) => {
        const s = await store.createSession({ title: `ttft ${mode} ${i}` });
        const scope = scopeFor(store, s.id);
        let first: number | undefined;
        const unsubscribe = live.subscribe(s.id, (d) => {
          if (d.kind === 'text') first ??= performance.now();
        });
        try {
          await store.emitEvent(s.id, userMessage(`Session ${i}: say ok.`));
          const t0 = performance.now();
          if (mode === 'coupled') await hands.resolve(scope, undefined); // container first: the hand before the brain
          await harness.wake(s.id);
          if (first === undefined) throw new Error(`session ${s.id} (${mode}) streamed no text`);
          ttft.push(first - t0);
        } finally {
          unsubscribe();
        }
        const provisioned = await store.getEvents(s.id, { types: ['hand.provisioned'] });
        if (mode === 'lazy' && provisioned.length > 0) throw new Error(`lazy session ${s.id} provisioned a hand`);
        if (mode === 'coupled' && provisioned.length !== 1) throw new Error(`coupled session ${s.id} has ${provisioned.length} hands`);
        for (const e of await hands.list(scope)) if (e.status === 'ready') await hands.release(scope, e.id);
      },
      admit,
    );
  } finally {
    await harness.close();
    await hands.closeAll();
  }
  return { ttft, wallMs: performance.now() - began };
}

function ttftRows(rows: Rows, label: string, coupled: TtftRun, lazy: TtftRun): void {
  const c50 = percentile(coupled.ttft, 50);
  const c95 = percentile(coupled.ttft, 95);
  const l50 = percentile(lazy.ttft, 50);
  const l95 = percentile(lazy.ttft, 95);
  const r50 = 1 - l50 / c50;
  const r95 = 1 - l95 / c95;
  const nc = coupled.ttft.length;
  const nl = lazy.ttft.length;
  rows.add(`TTFT coupled, ${label}, p50 (n=${nc})`, ms(c50));
  rows.add(`TTFT coupled, ${label}, p95 (n=${nc})`, ms(c95));
  rows.add(`TTFT lazy (Paddock), ${label}, p50 (n=${nl})`, ms(l50));
  rows.add(`TTFT lazy (Paddock), ${label}, p95 (n=${nl})`, ms(l95));
  rows.add(`TTFT reduction 1 − lazy/coupled, ${label}, p50`, pct(r50), '≥ 60 %', r50 >= 0.6);
  rows.add(`TTFT reduction 1 − lazy/coupled, ${label}, p95`, pct(r95), '≥ 90 %', r95 >= 0.9);
}

// ── 2. sandbox provisioning latency ────────────────────────────────────────────────────────────

async function resolveLatency(store: SessionStore, provisioner: Provisioner, pool: WarmPool | null): Promise<number[]> {
  const hands = new HandRegistry({ store, live: new LiveBus(), provisioners: { sandbox: provisioner }, defaultKind: 'sandbox', pool });
  const samples: number[] = [];
  try {
    for (let i = 0; i < RESOLVE_SAMPLES; i++) {
      if (pool) await waitUntil(() => pool.available === POOL_SIZE, 120_000, `the warm pool to hold ${POOL_SIZE} hands`);
      const s = await store.createSession({ title: `resolve ${pool ? 'pool' : 'cold'} ${i}` });
      const scope = scopeFor(store, s.id);
      const t0 = performance.now();
      const entry = await hands.resolve(scope, undefined);
      samples.push(performance.now() - t0);
      if (pool && pool.available !== POOL_SIZE - 1) throw new Error('resolve did not take its hand from the warm pool');
      await hands.release(scope, entry.id);
    }
  } finally {
    await hands.closeAll(); // closes the pool too
  }
  return samples;
}

// ── 3. harness overhead ────────────────────────────────────────────────────────────────────────


const WRITES = new Set<PropertyKey>(['acquireLease', 'emitEvent', 'emitEvents']);

/**
 * The store, recording when each write ran. One session at a time, so each write is its own
 * commit (the store's group commit has nothing to group), i.e. its own fsync on the durable store.
 */
function timingWrites(store: SessionStore): { store: SessionStore; spans: Array<[number, number]> } {
  const spans: Array<[number, number]> = [];
  const proxied = new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      // Always called on the real store: its #private fields are not reachable through a proxy.
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      if (!WRITES.has(prop)) return fn;
      return (...args: unknown[]) => {
        const t0 = performance.now();
        return (fn(...args) as Promise<unknown>).finally(() => spans.push([t0, performance.now()]));
      };
    },
  });
  return { store: proxied, spans };
}

interface Overhead {
  samples: number[];
  /** Per sample: time inside store writes between user.message stored and the model request. */
  writes: number[];
}

/** user.message stored → model request sent, on fresh one-event sessions, one at a time. */
async function harnessOverhead(base: SessionStore): Promise<Overhead> {
  const { store, spans } = timingWrites(base);
  const model = new TimingModel();
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  const harness = new Harness({ store, model, hands, live, leaseTtlMs: 15_000 });
  const out: Overhead = { samples: [], writes: [] };
  try {
    for (let i = 0; i < OVERHEAD_WARMUP + OVERHEAD_SAMPLES; i++) {
      const s = await base.createSession({ title: `overhead ${i}` });
      await base.emitEvent(s.id, userMessage('hi'));
      const before = model.calls.length;
      spans.length = 0;
      const t0 = performance.now();
      await harness.wake(s.id);
      const calledAt = model.calls[before];
      if (calledAt === undefined || model.calls.length !== before + 1) throw new Error(`wake(${s.id}) made ${model.calls.length - before} model calls, wanted 1`);
      if (i < OVERHEAD_WARMUP) continue;
      out.samples.push(calledAt - t0);
      out.writes.push(spans.filter(([, end]) => end <= calledAt).reduce((sum, [a, b]) => sum + (b - a), 0));
    }
  } finally {
    await harness.close();
    await hands.closeAll();
  }
  return out;
}

// ── the run ────────────────────────────────────────────────────────────────────────────────────

export async function runTtftBench(): Promise<Row[]> {
  // Every delayed fake response listens on the fake server's one shutdown signal, so 20 at once
  // is expected there, not a leak. Node creates that signal lazily (on first use), so the limit
  // has to stay raised for the run; it is restored at the end.
  const defaultMaxListeners = EventEmitter.defaultMaxListeners;
  EventEmitter.defaultMaxListeners = Math.max(defaultMaxListeners, CONCURRENCY + 10);
  try {
    return await ttftBench();
  } finally {
    EventEmitter.defaultMaxListeners = defaultMaxListeners;
  }
}

async function ttftBench(): Promise<Row[]> {
  const rows = new Rows();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-ttft-'));
  const started = performance.now();
  const store = await openSqliteStore({ file: path.join(dir, 'data', 'ttft.sqlite') });
  const memStore = await openSqliteStore({ file: ':memory:' });
  const fake = await startFakeMessagesApi();
  fake.setFallback(() => textResponse('ok', { delayMs: MODEL_DELAY_MS }));
  const real = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'hands') });
  const progress = (what: string, t0: number) => console.log(`  · ${what} (${secs(performance.now() - t0)})`);
  console.log(
    `ttft bench · ${SESSIONS} sessions, ${CONCURRENCY} concurrent · fake Messages API (real SDK, HTTP + SSE), ${MODEL_DELAY_MS} ms to headers, ` +
      `answer "ok" · store ${path.join(dir, 'data', 'ttft.sqlite')}`,
  );
  try {
    // One sandbox start up front: the provisioner checks once that this machine can sandbox, and
    // that check is not safe to run 20 times at once on 2 CPUs (it then reports ripgrep missing).
    {
      const t0 = performance.now();
      const warm = await real.provision('warm-up', { kind: 'sandbox', allowedDomains: [] }, { signal: new AbortController().signal });
      await warm.close();
      progress('sandbox warm-up start', t0);
    }

    // 1a. Simulated container start.
    {
      const delays = logNormalSamples(SESSIONS, SIM_MEDIAN_MS, SIM_P95_MS, SIM_SEED);
      let t0 = performance.now();
      const coupled = await ttftRun({ store, fake, provisioner: simulatedContainerProvisioner(delays), mode: 'coupled', sessions: SESSIONS });
      progress(`coupled, simulated start: ${coupled.ttft.length} sessions`, t0);
      t0 = performance.now();
      const lazy = await ttftRun({ store, fake, provisioner: simulatedContainerProvisioner(delays), mode: 'lazy', sessions: SESSIONS });
      progress(`lazy, simulated start: ${lazy.ttft.length} sessions`, t0);
      ttftRows(rows, 'simulated start (log-normal, p50 2 s, p95 8 s)', coupled, lazy);
      const drawn50 = percentile(delays, 50);
      const drawn95 = percentile(delays, 95);
      rows.add('  simulated start times drawn (seeded), p50 / p95', `${secs(drawn50)} / ${secs(drawn95)}`);
    }

    // 1b. Real sandboxed paddock-hand starts (bubblewrap), 20 at once on this machine.
    {
      let t0 = performance.now();
      const coupled = await ttftRun({ store, fake, provisioner: real, mode: 'coupled', sessions: SESSIONS, budgetMs: REAL_COUPLED_BUDGET_MS });
      progress(`coupled, real sandbox start: ${coupled.ttft.length} sessions`, t0);
      t0 = performance.now();
      const lazy = await ttftRun({ store, fake, provisioner: real, mode: 'lazy', sessions: SESSIONS });
      progress(`lazy, real sandbox start: ${lazy.ttft.length} sessions`, t0);
      const cut = coupled.ttft.length < SESSIONS ? `; coupled n cut by a ${secs(REAL_COUPLED_BUDGET_MS)} budget` : '';
      ttftRows(rows, `real sandbox start (${CONCURRENCY} at once, ${os.cpus().length} CPUs${cut})`, coupled, lazy);
    }
    console.log(`  · TTFT part ${secs(performance.now() - started)}`);

    // 2. Provisioning latency of a session's first sandbox hand.
    {
      let t0 = performance.now();
      const cold = await resolveLatency(store, real, null);
      progress(`resolve, no pool: ${cold.length} samples`, t0);
      t0 = performance.now();
      const pool = new WarmPool(real, { kind: 'sandbox', allowedDomains: [] }, POOL_SIZE).start();
      const pooled = await resolveLatency(store, real, pool);
      progress(`resolve, warm pool: ${pooled.length} samples`, t0);
      const n = RESOLVE_SAMPLES;
      rows.add(`sandbox hand: resolve() first hand, no pool, p50 of ${n} seq.`, ms(percentile(cold, 50)));
      rows.add(`sandbox hand: resolve() first hand, no pool, p95 of ${n} seq.`, ms(percentile(cold, 95)));
      rows.add(`sandbox hand: resolve() first hand, warm pool of ${POOL_SIZE}, p50 of ${n}`, ms(percentile(pooled, 50)));
      rows.add(`sandbox hand: resolve() first hand, warm pool of ${POOL_SIZE}, p95 of ${n}`, ms(percentile(pooled, 95)));
    }

    // 3. Harness overhead, user.message stored → model request.
    {
      const t0 = performance.now();
      const durable = await harnessOverhead(store);
      const memory = await harnessOverhead(memStore);
      progress(`harness overhead: ${durable.samples.length} + ${memory.samples.length} samples`, t0);
      const n = OVERHEAD_SAMPLES;
      const d50 = percentile(durable.samples, 50);
      const d99 = percentile(durable.samples, 99);
      rows.add(`harness overhead user.message → model request, durable store, p50 of ${n}`, ms(d50), '≤ 5 ms', d50 <= 5);
      rows.add(`harness overhead user.message → model request, durable store, p99 of ${n}`, ms(d99), '≤ 25 ms', d99 <= 25);
      rows.add('  of which 3 fsync’d writes (lease, status_running, span start), p50', ms(percentile(durable.writes, 50)));
      rows.add(`harness overhead, :memory: store (informational, no fsync), p50 of ${n}`, ms(percentile(memory.samples, 50)));
      rows.add(`harness overhead, :memory: store (informational, no fsync), p99 of ${n}`, ms(percentile(memory.samples, 99)));
    }
  } finally {
    await fake.close();
    await memStore.close();
    await store.close();
    // Closed hands take their sandbox down with them; give the process groups a moment to exit.
    const needle = path.join(dir, 'hands');
    const deadline = performance.now() + 15_000;
    while (processesMentioning(needle).length > 0 && performance.now() < deadline) await sleep(100);
    const left = processesMentioning(needle).length;
    rows.add('sandboxed hand processes left after close', String(left), '0', left === 0);
    rmSync(dir, { recursive: true, force: true });
  }
  return rows.rows;
}

runIfMain(import.meta.url, runTtftBench);
