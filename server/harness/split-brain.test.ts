import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaleFenceError, isDomainError } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import type { ModelRequest } from '~/server/harness/core/context';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient, ModelTurn, TurnBlock } from '~/server/harness/core/model-client';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { openPostgresStore } from '~/server/session/postgres-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { Checkpoint, EmitOptions, EventSlice, Fence, ListQuery, SessionInit, SessionStore } from '~/server/session/store';
import { mulberry32 as prng } from '~/lib/prng';

/**
 * Split brain: two harness instances (own instance ids, own hand registries, as two server
 * processes would have) wake the same sessions at once, 500 times per store. Half the harnesses
 * hold leases of a few milliseconds, so a lease routinely expires mid-step and the other instance
 * takes over while the first is still writing: only lease fencing keeps the log whole. Every round
 * ends with the log checked by checkLogInvariants (server/harness/testing/log-invariants.ts).
 *
 * The model is in-process and answers at once (no HTTP here), scripted from the request: a plan in
 * the user message says how many tool turns come before the final text.
 *
 * PostgreSQL must be running (scripts/ensure-postgres.sh): without it the suite fails, it is never
 * skipped. `PADDOCK_SPLIT_BRAIN_ROUNDS` and `PADDOCK_SPLIT_BRAIN_SEED` override the defaults.
 */
const ROUNDS = Number(process.env.PADDOCK_SPLIT_BRAIN_ROUNDS ?? 500);
const SEED = Number(process.env.PADDOCK_SPLIT_BRAIN_SEED ?? 0x5b1e);
/** Sessions raced at once: more overlap between rounds, and a round count that fits the budget. */
const WAVE = 10;
/** A lease this short has expired before the harness's first renewal (every 50 ms at the least). */
const FLAKY_TTL_MS = 3;
const STEADY_TTL_MS = 10_000;

// ── PostgreSQL: a fresh database for this file, dropped at the end ──
let pgDb: TestDatabase | null = null;
let pgUrl = '';
let tmpDir = '';
beforeAll(async () => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-split-brain-'));
  pgDb = await createTestDatabase('paddock_split');
  pgUrl = pgDb.url;
});

afterAll(async () => {
  await pgDb?.drop();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
});

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────


const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const hop = () => new Promise<void>((resolve) => setImmediate(resolve));
const userMessage = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });
const USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

interface Plan {
  tools: number;
  parallel: boolean;
}
const planText = (tag: string, p: Plan) => `${tag} plan: tools=${p.tools} parallel=${p.parallel ? 'yes' : 'no'}`;

/**
 * Answers at once, from the request alone (a stateless brain, like the real one): tool turns
 * until the plan's count is reached, then a final text naming the round.
 */
class ScriptedModel implements ModelClient {
  readonly label = 'scripted';
  readonly model = 'scripted-model';
  readonly isDemo = false;
  calls = 0;
  private ids = 0;

  constructor(
    private readonly name: string,
    private readonly rng: () => number,
  ) {}

  async stream(request: ModelRequest): Promise<ModelTurn> {
    this.calls++;
    // "Instant", yet a few event-loop hops so two harnesses' steps interleave differently each time.
    for (let n = Math.floor(this.rng() * 3); n > 0; n--) await hop();
    const all = JSON.stringify(request.messages);
    const m = /(round \d+) plan: tools=(\d+) parallel=(yes|no)/.exec(all);
    if (!m) throw new Error(`no plan in the request: ${all.slice(0, 200)}`);
    const [, tag, tools, parallel] = m;
    const done = request.messages.filter((msg) => msg.role === 'assistant' && Array.isArray(msg.content) && msg.content.some((b) => b.type === 'tool_use')).length;
    const id = () => `toolu_${this.name}_${++this.ids}`;
    let content: TurnBlock[];
    if (done < Number(tools)) {
      const file = `notes/${done}.txt`;
      content =
        parallel === 'yes'
          ? [
              { type: 'text', text: `step ${done}: write and read at once` },
              { type: 'tool_use', id: id(), name: 'write', input: { file_path: file, content: `${tag} step ${done}` } },
              { type: 'tool_use', id: id(), name: 'read', input: { file_path: file } },
            ]
          : [{ type: 'tool_use', id: id(), name: done % 2 === 0 ? 'write' : 'read', input: done % 2 === 0 ? { path: file, content: tag! } : { path: `notes/${done - 1}.txt` } }];
    } else {
      content = [{ type: 'text', text: `done: ${tag}` }];
    }
    return { content, stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', usage: USAGE, ttftMs: 0.1 };
  }
}

interface Observed {
  /** Appends rejected because the writer's lease epoch was stale. */
  staleRejected: number;
  acquired: number;
  /** Every append attempted, in order, and what became of it. */
  appends: Array<{ events: NewEvent[]; stored: StoredEvent[] | null; error: unknown }>;
}

/**
 * A store as one harness instance sees it: the shared store, observed. With `partitioned`,
 * lease renewals never reach the database but report success, like a process whose renewals are
 * lost in a network partition or a long GC pause: it keeps believing it holds the lease.
 */
class ObservedStore implements SessionStore {
  readonly seen: Observed = { staleRejected: 0, acquired: 0, appends: [] };
  partitioned = false;

  constructor(private readonly inner: SessionStore) {}

  createSession(init: SessionInit) {
    return this.inner.createSession(init);
  }
  getSession(id: string) {
    return this.inner.getSession(id);
  }
  updateSession(id: string, patch: { title?: string }) {
    return this.inner.updateSession(id, patch);
  }
  listSessions(q: ListQuery) {
    return this.inner.listSessions(q);
  }
  getEvents(id: string, slice?: EventSlice) {
    return this.inner.getEvents(id, slice);
  }
  async emitEvent(id: string, event: NewEvent, opts?: EmitOptions): Promise<StoredEvent> {
    const [stored] = await this.emitEvents(id, [event], opts);
    return stored!;
  }
  async emitEvents(id: string, events: readonly NewEvent[], opts?: EmitOptions): Promise<StoredEvent[]> {
    const record: Observed['appends'][number] = { events: [...events], stored: null, error: null };
    this.seen.appends.push(record);
    try {
      record.stored = await this.inner.emitEvents(id, events, opts);
      return record.stored;
    } catch (e) {
      record.error = e;
      if (isDomainError(e) && e.code === 'stale_fence') this.seen.staleRejected++;
      throw e;
    }
  }
  follow(id: string, afterSeq: number, signal: AbortSignal) {
    return this.inner.follow(id, afterSeq, signal);
  }
  async acquireLease(id: string, owner: string, ttlMs: number): Promise<Fence | null> {
    const fence = await this.inner.acquireLease(id, owner, ttlMs);
    if (fence) this.seen.acquired++;
    return fence;
  }
  renewLease(fence: Fence, ttlMs: number): Promise<boolean> {
    return this.partitioned ? Promise.resolve(true) : this.inner.renewLease(fence, ttlMs);
  }
  releaseLease(fence: Fence, settledSeq?: number) {
    return this.inner.releaseLease(fence, settledSeq);
  }
  sessionsNeedingWork(limit: number) {
    return this.inner.sessionsNeedingWork(limit);
  }
  touchTab(sessionId: string, hand: string, tabId: string) {
    return this.inner.touchTab(sessionId, hand, tabId);
  }
  liveTabs(sessionId: string, hand: string, withinMs: number) {
    return this.inner.liveTabs(sessionId, hand, withinMs);
  }
  claimCall(sessionId: string, callId: string, tabId: string) {
    return this.inner.claimCall(sessionId, callId, tabId);
  }
  callClaim(sessionId: string, callId: string) {
    return this.inner.callClaim(sessionId, callId);
  }
  deleteSession(id: string) {
    return this.inner.deleteSession(id);
  }
  pruneHandRows() {
    return this.inner.pruneHandRows();
  }
  readCheckpoint(id: string) {
    return this.inner.readCheckpoint(id);
  }
  writeCheckpoint(id: string, checkpoint: Checkpoint) {
    return this.inner.writeCheckpoint(id, checkpoint);
  }
  close(): Promise<void> {
    return Promise.resolve(); // the shared store is closed by its owner
  }
}

interface Instance {
  name: string;
  harness: Harness;
  store: ObservedStore;
  model: ModelClient & { calls: number };
}

/** One harness "process": its own instance id, hand registry, live bus and view of the store. */
function instance(name: string, shared: SessionStore, o: { ttlMs: number; model?: ModelClient & { calls: number }; rng?: () => number }): Instance {
  const store = new ObservedStore(shared);
  const live = new LiveBus();
  const model = o.model ?? new ScriptedModel(name, o.rng ?? Math.random);
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  const harness = new Harness({ store, model, hands, live, leaseTtlMs: o.ttlMs, retryBaseMs: 1, instanceId: name });
  return { name, harness, store, model };
}

async function lastEvent(store: SessionStore, id: string): Promise<StoredEvent | undefined> {
  return (await store.getEvents(id, { from: -1 }))[0];
}

/** Waits until the log ends idle (a takeover's re-wake may still be finishing), or gives up. */
async function settle(store: SessionStore, id: string, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if ((await lastEvent(store, id))?.type === 'session.status_idle') return true;
    if (performance.now() > deadline) return false;
    await sleep(5);
  }
}

const describeLog = (events: StoredEvent[]) =>
  events.map((e) => `  ${e.seq} ${e.type}${e.type === 'span.model_request_end' ? ` → ${e.model_request_start_id}${e.is_error ? ' (error)' : ''}` : ''}${'tool_use_id' in e ? ` → ${e.tool_use_id}` : ''}`).join('\n');

/**
 * Collects the harness's error-level log lines (a loop that threw, say) while `fn` runs: such a
 * failure can hide behind the other instance finishing the session, so the log alone would pass.
 */
async function errorLogsDuring(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  const spy = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.includes('"level":"error"')) lines.push(text.trim());
    return Reflect.apply(original, process.stderr, [chunk, ...rest]) as boolean;
  };
  process.stderr.write = spy;
  try {
    await fn();
  } finally {
    process.stderr.write = original;
  }
  return lines;
}

// ── the suites ─────────────────────────────────────────────────────────────────────────────────

interface Backend {
  name: string;
  /** One store per harness instance side (PostgreSQL: two pools, as two servers would hold). */
  open(): Promise<{ a: SessionStore; b: SessionStore; close: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'SQLite (temp file)',
    async open() {
      // One connection per file per process (see openSqliteStore): both instances share it.
      const store = await openSqliteStore({ file: path.join(tmpDir, `split-${randomBytes(4).toString('hex')}.sqlite`) });
      return { a: store, b: store, close: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL (fresh database)',
    async open() {
      const a = await openPostgresStore({ url: pgUrl });
      const b = await openPostgresStore({ url: pgUrl });
      return {
        a,
        b,
        close: async () => {
          await a.close();
          await b.close();
        },
      };
    },
  },
];

describe.each(backends)('split brain on $name', (backend) => {
  it(
    `two harness instances waking ${ROUNDS} sessions at once, with leases expiring mid-step, leave every log well-formed and idle`,
    async ({ annotate }) => {
      const t0 = performance.now();
      const { a, b, close } = await backend.open();
      // Rounds draw from `rng` synchronously, in round order, so each round's plan and pairing
      // follow from the seed alone; the models' event-loop hops (timing) draw from their own.
      const rng = prng(SEED);
      const hops = prng(SEED ^ 0x9e3779b9);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
      const sides = {
        a: [instance('a-steady', a, { ttlMs: STEADY_TTL_MS, rng: hops }), instance('a-flaky', a, { ttlMs: FLAKY_TTL_MS, rng: hops })],
        b: [instance('b-steady', b, { ttlMs: STEADY_TTL_MS, rng: hops }), instance('b-flaky', b, { ttlMs: FLAKY_TTL_MS, rng: hops })],
      };
      const everyone = [...sides.a, ...sides.b];
      const failures: string[] = [];
      let events = 0;
      let slowSettles = 0;

      async function round(n: number): Promise<void> {
        const plan: Plan = { tools: pick([0, 1, 1, 2, 3]), parallel: rng() < 0.3 };
        const x = pick(sides.a);
        const y = pick(sides.b);
        const pokeAgain = rng() < 0.5 ? { who: pick([x, y]), afterMs: Math.floor(rng() * 4) } : null;
        const session = await a.createSession({ title: `split brain round ${n}` });
        await a.emitEvent(session.id, userMessage(planText(`round ${n}`, plan)));

        const wakes = [x.harness.wake(session.id), y.harness.wake(session.id)];
        if (pokeAgain) wakes.push(sleep(pokeAgain.afterMs).then(() => pokeAgain.who.harness.wake(session.id)));
        await Promise.all(wakes);
        // A fenced-off instance may still be finishing a re-wake; give it a moment before judging.
        if (!(await settle(a, session.id, 50))) {
          slowSettles++;
          await settle(a, session.id, 5_000);
        }
        const log = await a.getEvents(session.id);
        events += log.length;
        const violations = checkLogInvariants(log);
        const last = log.filter((e) => e.type === 'agent.message').at(-1);
        if (!(last?.type === 'agent.message' && last.content.some((c) => c.type === 'text' && c.text === `done: round ${n}`))) {
          violations.push(`[answer] no final "done: round ${n}" agent.message`);
        }
        if (violations.length > 0) {
          failures.push(
            `round ${n} (seed ${SEED}, session ${session.id}, ${x.name} vs ${y.name}, plan ${JSON.stringify(plan)}):\n  ${violations.join('\n  ')}\n${describeLog(log)}`,
          );
        }
      }

      const errorLogs = await errorLogsDuring(async () => {
        try {
          for (let start = 0; start < ROUNDS; start += WAVE) {
            const wave = Array.from({ length: Math.min(WAVE, ROUNDS - start) }, (_, i) => start + i);
            await Promise.all(wave.map((n) => round(n)));
          }
        } finally {
          await Promise.all(everyone.map((i) => i.harness.close()));
          await close();
        }
      });

      const stale = everyone.reduce((sum, i) => sum + i.store.seen.staleRejected, 0);
      const acquired = everyone.reduce((sum, i) => sum + i.store.seen.acquired, 0);
      const calls = everyone.reduce((sum, i) => sum + i.model.calls, 0);
      const summary =
        `split brain on ${backend.name}: ${ROUNDS} sessions, ${events} events, ${acquired} leases acquired, ${stale} stale appends rejected, ` +
        `${calls} model calls, ${slowSettles} rounds still settling after the wakes returned, ${failures.length} rounds with violations, ` +
        `${Math.round(performance.now() - t0)} ms (seed ${SEED})`;
      await annotate(summary);
      process.stdout.write(`[split-brain] ${summary}\n`);

      expect(failures.slice(0, 3).join('\n\n')).toBe('');
      expect(errorLogs.slice(0, 5)).toEqual([]);
      // Not vacuous: instances really did take sessions over from each other mid-run.
      expect(stale).toBeGreaterThan(0);
    },
    120_000,
  );

  it('fences off a harness whose lease expired and was taken over: its next append is rejected and nothing it wrote afterwards is in the log', async () => {
    const { a, b, close } = await backend.open();
    let release = () => {};
    let entered = () => {};
    const inTurn = new Promise<void>((resolve) => (entered = resolve));
    const gated: ModelClient & { calls: number } = {
      label: 'gated',
      model: 'gated-model',
      isDemo: false,
      calls: 0,
      async stream(): Promise<ModelTurn> {
        this.calls++;
        entered();
        // Stalls mid-turn (a GC pause, a partition) until the other instance has taken over.
        await new Promise<void>((resolve) => (release = resolve));
        return { content: [{ type: 'text', text: 'stale answer from A' }], stopReason: 'end_turn', usage: USAGE, ttftMs: 1 };
      },
    };
    const A = instance('harness-a', a, { ttlMs: 300, model: gated });
    A.store.partitioned = true;
    const B = instance('harness-b', b, { ttlMs: STEADY_TTL_MS });
    try {
      const s = await a.createSession({ title: 'fencing' });
      await a.emitEvent(s.id, userMessage(planText('round 0', { tools: 0, parallel: false })));

      const aDone = A.harness.wake(s.id);
      await inTurn; // A holds the lease and is mid-turn, its span.model_request_start stored
      expect((await a.getEvents(s.id)).map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'span.model_request_start']);
      await sleep(450); // A's lease runs out: its renewals never reach the store

      const takeoverAt = A.store.seen.appends.length;
      const before = (await lastEvent(a, s.id))!.seq;
      await B.harness.wake(s.id); // B acquires the expired lease (a higher epoch), answers, idles
      expect(B.store.seen.acquired).toBe(1);
      expect(B.model.calls).toBe(1);

      release();
      await aDone;

      const afterTakeover = A.store.seen.appends.slice(takeoverAt);
      expect(afterTakeover.length).toBeGreaterThan(0);
      expect(afterTakeover[0]!.error).toBeInstanceOf(StaleFenceError);
      expect(afterTakeover[0]!.events.map((e) => e.type)).toEqual(['agent.message', 'span.model_request_end']);
      expect(afterTakeover.filter((r) => r.stored !== null)).toEqual([]);

      const log = await a.getEvents(s.id);
      expect(checkLogInvariants(log)).toEqual([]);
      // Everything after the takeover is B's: A's stored appends all predate it.
      const fromA = new Set(A.store.seen.appends.flatMap((r) => r.stored ?? []).map((e) => e.id));
      expect(log.filter((e) => e.seq > before && fromA.has(e.id))).toEqual([]);
      expect(JSON.stringify(log)).not.toContain('stale answer from A');
      expect(log.filter((e) => e.type === 'agent.message')).toMatchObject([{ content: [{ type: 'text', text: 'done: round 0' }] }]);
      // A's turn was asked but never stored: B re-asked it under its own span.
      const starts = log.filter((e) => e.type === 'span.model_request_start');
      expect(starts).toHaveLength(2);
      expect(log.filter((e) => e.type === 'span.model_request_end')).toMatchObject([{ model_request_start_id: starts[1]!.id, is_error: false }]);
    } finally {
      release();
      await A.harness.close();
      await B.harness.close();
      await close();
    }
  });
});

describe('a user racing the harness', () => {
  /**
   * Found by this suite: a user.message stored after a turn's span.model_request_start, but before
   * its answer, must get a turn of its own (the model never saw it).
   */
  it('answers a user.message sent while the final answer is streaming', async () => {
    const store = await openSqliteStore({ file: path.join(tmpDir, 'mid-turn.sqlite') });
    let release = () => {};
    let entered = () => {};
    const inTurn = new Promise<void>((resolve) => (entered = resolve));
    const model: ModelClient & { calls: number } = {
      label: 'slow',
      model: 'slow-model',
      isDemo: false,
      calls: 0,
      async stream(request: ModelRequest): Promise<ModelTurn> {
        this.calls++;
        if (this.calls === 1) {
          entered();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return { content: [{ type: 'text', text: `answer ${this.calls} to ${JSON.stringify(request.messages).length} bytes` }], stopReason: 'end_turn', usage: USAGE, ttftMs: 1 };
      },
    };
    const h = instance('solo', store, { ttlMs: STEADY_TTL_MS, model });
    try {
      const s = await store.createSession({});
      await store.emitEvent(s.id, userMessage('first'));
      const done = h.harness.wake(s.id);
      await inTurn;
      await store.emitEvent(s.id, userMessage('second, sent while the first answer streams'));
      await sleep(20);
      release();
      await done;
      expect(await settle(store, s.id, 2_000)).toBe(true);
      const log = await store.getEvents(s.id);
      expect(checkLogInvariants(log)).toEqual([]);
      expect(model.calls).toBe(2);
    } finally {
      release();
      await h.harness.close();
      await store.close();
    }
  });
});
