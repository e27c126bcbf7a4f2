import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError, isStoreUnavailable } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { mulberry32 as prng } from '~/lib/prng';
import { type FollowItem, followWithDeltas } from '~/server/api/follow';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import type { ModelRequest } from '~/server/harness/core/context';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient, ModelTurn, TurnBlock } from '~/server/harness/core/model-client';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { type PrivatePostgres, createPrivatePostgres } from '~/server/session/testing/private-postgres';
import type { Runtime } from '~/server/runtime';
import type { Checkpoint, EmitOptions, EventSlice, Fence, ListQuery, SessionInit, SessionStore } from '~/server/session/store';
import { testRuntime } from '~/server/harness/testing/test-runtime';

/**
 * Database faults: a Paddock harness on the PostgreSQL store, with the real SDK against the fake
 * Messages API and an in-process memory hand, while the database is stopped and started under it.
 * The cluster is this file's own (private-postgres.ts); the shared one on :5432 is never touched.
 * A follower through the API's followWithDeltas stands in for the browser.
 */
let cluster: PrivatePostgres;
let store: PostgresSessionStore;
let fake: FakeMessagesApi;
let live: LiveBus;
let harness: Harness;
let rt: Runtime;
let dir: string;
let stopSweeper: () => void = () => undefined;

beforeAll(async () => {
  cluster = await createPrivatePostgres();
  process.stderr.write(`[db-outage] private cluster: initdb ${cluster.timings.initdbMs} ms, first start ${cluster.timings.startMs} ms\n`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-db-outage-'));
  store = await openPostgresStore({ url: cluster.url() });
  fake = await startFakeMessagesApi();
  rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    harness: {
      retryBaseMs: 20,
      // Long enough that the outages below never let the lease lapse into another wake.
      leaseTtlMs: 10_000,
      storeRetryBaseMs: 50,
      storeRetryMaxMs: 400,
    },
  });
  ({ live, harness } = rt);
  stopSweeper = harness.startSweeper(100);
}, 60_000);

afterAll(async () => {
  stopSweeper();
  await harness?.close();
  await store?.close();
  await fake?.close();
  await cluster?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const api = () => createCaller({ runtime: rt, caller: OWNER });
const userText = (text: string) => ({ type: 'user.message' as const, content: [{ type: 'text' as const, text }] });
const agentTexts = (events: StoredEvent[]) => events.flatMap((e) => (e.type === 'agent.message' ? e.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])) : []));

/** What the browser would see: every follow item, in order, until stopped. */
function follower(sessionId: string) {
  const ac = new AbortController();
  const items: FollowItem[] = [];
  const done = (async () => {
    for await (const item of followWithDeltas(rt, sessionId, 0, ac.signal)) items.push(item);
  })();
  return {
    items,
    events: () => items.flatMap((i) => (i.kind === 'event' ? [i.event] : [])),
    async waitFor(pred: (e: StoredEvent) => boolean, timeoutMs = 30_000): Promise<StoredEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = items.find((i): i is Extract<FollowItem, { kind: 'event' }> => i.kind === 'event' && pred(i.event));
        if (hit) return hit.event;
        if (Date.now() > deadline) throw new Error(`follower: no matching event within ${timeoutMs} ms; saw ${items.length} items`);
        await sleep(10);
      }
    },
    async stop() {
      ac.abort();
      await done;
    },
  };
}

/** Resolves when the first live text delta of the session arrives: the model stream is in flight. */
function firstDelta(sessionId: string): Promise<void> {
  return new Promise((resolve) => {
    const off = live.subscribe(sessionId, (d) => {
      if (d.kind !== 'text') return;
      off();
      resolve();
    });
  });
}

describe('database faults: PostgreSQL restarted mid-session', () => {
  it('retries through restarts mid-stream, while idle and while the model thinks; the session completes with every acknowledged message and nothing asked or stored twice', async ({ annotate }) => {
    const s = await api().sessions.create({ title: 'outage' });
    const f = follower(s.id);
    const acknowledged: StoredEvent[] = [];
    const timings: string[] = [];
    try {
      // ── 1: the database goes away while the model streams a tool call ─────────────────────
      // The answer ends only once the database is down, however slowly the machine stops it.
      let databaseDown!: () => void;
      const endAfter = new Promise<void>((r) => (databaseDown = r));
      fake.enqueue(
        {
          kind: 'message',
          steps: [
            { kind: 'text', text: 'Writing the note now, slowly enough to outlive a database restart.', chunks: 20 },
            { kind: 'tool_use', name: 'write', input: { file_path: 'note.md', content: 'alpha' }, id: 'toolu_w1' },
          ],
          chunkDelayMs: 50,
          endAfter,
        },
        toolUseResponse('read', { file_path: 'note.md' }, { id: 'toolu_r1' }),
        textResponse('The note says alpha.'),
      );
      const streaming = firstDelta(s.id);
      acknowledged.push(await api().events.send({ sessionId: s.id, event: userText('write a note, then read it') }));
      await streaming;
      const retriesBefore = harness.storeRetries;
      const down1 = performance.now();
      await cluster.stop('fast');
      databaseDown();
      // The answer arrives while the database is down: the harness's writes of it meet the outage.
      await sleep(1_500);
      await cluster.start();
      const up1 = performance.now();
      const answer1 = await f.waitFor((e) => e.type === 'agent.message' && agentTexts([e]).includes('The note says alpha.'));
      await f.waitFor((e) => e.type === 'session.status_idle' && e.seq > answer1.seq);
      const retries1 = harness.storeRetries - retriesBefore;
      timings.push(`mid-stream: down ${Math.round(up1 - down1)} ms, store retries ${retries1}, final answer ${Math.round(performance.now() - up1)} ms after the restart`);
      // The turn streamed during the outage was stored in place, not asked for again.
      expect(fake.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(3);
      expect(retries1).toBeGreaterThan(0);

      // ── 2: idle session, crash-like restart; a send during the outage is refused, not lost ──
      const down2 = performance.now();
      await cluster.stop('immediate');
      const refused = await api()
        .events.send({ sessionId: s.id, event: userText('this one is sent while the database is down') })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(TRPCError);
      expect((refused as TRPCError).code).toBe('SERVICE_UNAVAILABLE');
      expect((refused as TRPCError).message).toBe('the session store (PostgreSQL) is unreachable; retrying');
      expect(isStoreUnavailable((refused as TRPCError).cause)).toBe(true);
      // The follower learns of the outage (the LISTEN connection's loss wakes it) instead of
      // sleeping through it.
      await expect.poll(() => f.items.some((i) => i.kind === 'store' && !i.available), { timeout: 10_000 }).toBe(true);
      await sleep(500);
      await cluster.start();
      const up2 = performance.now();
      const outageSeen = f.items.findIndex((i) => i.kind === 'store' && !i.available);
      await expect.poll(() => f.items.slice(outageSeen).some((i) => i.kind === 'store' && i.available), { timeout: 10_000 }).toBe(true);
      timings.push(`idle: down ${Math.round(up2 - down2)} ms, follower reported the store back ${Math.round(performance.now() - up2)} ms after the restart`);

      // ── 3: the database goes away while the model thinks (before its first byte) ───────────
      // The answer ends only once the database is down (a delay was not enough: a loaded machine
      // saw the request start after the answer was in).
      let databaseDown3!: () => void;
      const endAfter3 = new Promise<void>((r) => (databaseDown3 = r));
      fake.enqueue(
        toolUseResponse('edit', { file_path: 'note.md', old_string: 'alpha', new_string: 'beta' }, { id: 'toolu_e1' }),
        textResponse('Now it says beta.', { endAfter: endAfter3 }),
      );
      const retriesBefore3 = harness.storeRetries;
      acknowledged.push(await api().events.send({ sessionId: s.id, event: userText('change alpha to beta') }));
      const editResult = await f.waitFor((e) => e.type === 'agent.tool_result' && e.tool_use_id === f.events().find((u) => u.type === 'agent.tool_use' && u.name === 'edit')?.id);
      await f.waitFor((e) => e.type === 'span.model_request_start' && e.seq > editResult.seq);
      const down3 = performance.now();
      await cluster.stop('fast');
      databaseDown3();
      // The answer arrives while the database is down; the turn is stored once it is back.
      await sleep(1_800);
      await cluster.start();
      const up3 = performance.now();
      const answer3 = await f.waitFor((e) => e.type === 'agent.message' && agentTexts([e]).includes('Now it says beta.'));
      const idle3 = await f.waitFor((e) => e.type === 'session.status_idle' && e.seq > answer3.seq);
      const retries3 = harness.storeRetries - retriesBefore3;
      timings.push(`model thinking: down ${Math.round(up3 - down3)} ms, store retries ${retries3}, idle ${Math.round(performance.now() - up3)} ms after the restart`);
      expect(retries3).toBeGreaterThan(0);
      expect(fake.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(5);

      // ── the log ──────────────────────────────────────────────────────────────────────────
      const events = await store.getEvents(s.id);
      expect(checkLogInvariants(events)).toEqual([]);
      expect(events.at(-1)?.id).toBe(idle3.id);
      expect(agentTexts(events)).toContain('The note says alpha.');
      expect(agentTexts(events).at(-1)).toBe('Now it says beta.');
      for (const m of acknowledged) expect(events.find((e) => e.id === m.id)).toMatchObject({ type: 'user.message', seq: m.seq });
      const sent = events.filter((e) => e.type === 'user.message');
      expect(sent.map((e) => e.id)).toEqual(acknowledged.map((m) => m.id));
      // Every tool ran and its result was stored once (checkLogInvariants), on the memory hand.
      const results = events.filter((e) => e.type === 'agent.tool_result');
      expect(results.map((r) => r.is_error ?? false)).toEqual([false, false, false]);

      // The follower, like a browser, has the whole log once, in order, across every outage.
      await expect.poll(() => f.events().length).toBe(events.length);
      expect(f.events().map((e) => e.seq)).toEqual(events.map((e) => e.seq));
      expect(harness.storeRetries).toBeGreaterThan(0);
    } finally {
      await f.stop();
      const summary = `${timings.join('; ')}; total store retries ${harness.storeRetries}`;
      await annotate(summary);
      process.stderr.write(`[db-outage] ${summary}\n`);
    }
  }, 90_000);
});

/**
 * Every store call the harness makes fails now and then, in the two ways a dropped connection
 * fails one: before it reached the database, or after its commit with the answer lost. Seeded, so
 * a failure replays. The loop must re-derive from the log after the ambiguous kind.
 */
class FlakyStore implements SessionStore {
  readonly faults = { before: 0, after: 0 };

  constructor(
    private readonly inner: SessionStore,
    private readonly rng: () => number,
    private readonly rate: number,
  ) {}

  private async flaky<T>(fn: () => Promise<T>): Promise<T> {
    const r = this.rng();
    if (r < this.rate / 2) {
      this.faults.before++;
      throw new StoreUnavailableError('PostgreSQL', 'injected: refused');
    }
    const out = await fn();
    if (r < this.rate) {
      this.faults.after++;
      throw new StoreUnavailableError('PostgreSQL', 'injected: committed, answer lost');
    }
    return out;
  }

  createSession = (init: SessionInit) => this.inner.createSession(init);
  getSession = (id: string) => this.flaky(() => this.inner.getSession(id));
  updateSession = (id: string, patch: { title?: string }) => this.flaky(() => this.inner.updateSession(id, patch));
  listSessions = (q: ListQuery) => this.flaky(() => this.inner.listSessions(q));
  getEvents = (id: string, slice?: EventSlice) => this.flaky(() => this.inner.getEvents(id, slice));
  emitEvent = (id: string, event: NewEvent, opts?: EmitOptions) => this.flaky(() => this.inner.emitEvent(id, event, opts));
  emitEvents = (id: string, events: readonly NewEvent[], opts?: EmitOptions) => this.flaky(() => this.inner.emitEvents(id, events, opts));
  acquireLease = (id: string, owner: string, ttlMs: number) => this.flaky(() => this.inner.acquireLease(id, owner, ttlMs));
  renewLease = (fence: Fence, ttlMs: number) => this.flaky(() => this.inner.renewLease(fence, ttlMs));
  releaseLease = (fence: Fence, settledSeq?: number) => this.flaky(() => this.inner.releaseLease(fence, settledSeq));
  sessionsNeedingWork = (limit: number) => this.flaky(() => this.inner.sessionsNeedingWork(limit));
  touchTab = (sessionId: string, hand: string, tabId: string) => this.flaky(() => this.inner.touchTab(sessionId, hand, tabId));
  liveTabs = (sessionId: string, hand: string, withinMs: number) => this.flaky(() => this.inner.liveTabs(sessionId, hand, withinMs));
  claimCall = (sessionId: string, callId: string, tabId: string) => this.flaky(() => this.inner.claimCall(sessionId, callId, tabId));
  callClaim = (sessionId: string, callId: string) => this.flaky(() => this.inner.callClaim(sessionId, callId));
  deleteSession = (id: string) => this.flaky(() => this.inner.deleteSession(id));
  pruneHandRows = () => this.flaky(() => this.inner.pruneHandRows());
  readCheckpoint = (id: string) => this.flaky(() => this.inner.readCheckpoint(id));
  writeCheckpoint = (id: string, checkpoint: Checkpoint) => this.flaky(() => this.inner.writeCheckpoint(id, checkpoint));
  close = () => this.inner.close();

  async *follow(id: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<StoredEvent> {
    if (this.rng() < this.rate) {
      this.faults.before++;
      throw new StoreUnavailableError('PostgreSQL', 'injected: follow refused');
    }
    yield* this.inner.follow(id, afterSeq, signal);
  }
}

const USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** Answers from the request alone, so asking again is harmless: write, read, then a final text. */
class StatelessModel implements ModelClient {
  readonly label = 'stateless';
  readonly model = 'stateless-model';
  readonly isDemo = false;
  private ids = 0;

  stream(request: ModelRequest): Promise<ModelTurn> {
    const results = request.messages.filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')).length;
    const asks = request.messages.filter((m) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((b) => b.type === 'text'))).length;
    const id = `toolu_flaky_${++this.ids}`;
    const content: TurnBlock[] =
      results % 3 === 2
        ? [{ type: 'text', text: `done ${asks}` }]
        : [{ type: 'tool_use', id, name: results % 3 === 0 ? 'write' : 'read', input: { path: `n${asks}.txt`, ...(results % 3 === 0 ? { content: `ask ${asks}` } : {}) } }];
    // A final text after each pair of tool calls: results count 2, 5, 8… mark the end of an ask.
    return Promise.resolve({ content, stopReason: content[0]?.type === 'tool_use' ? 'tool_use' : 'end_turn', usage: USAGE, ttftMs: 0.1 });
  }
}

describe('database faults: every store call may fail, before or after its commit', () => {
  it('finishes every session with well-formed logs holding every message, retrying each fault', async ({ annotate }) => {
    // A database of its own: the first test's sweeper must not pick these sessions up.
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query('create database flaky');
    await admin.end();
    const own = await openPostgresStore({ url: cluster.url('flaky') });
    const flaky = new FlakyStore(own, prng(0xdb0), 0.15);
    const flakyLive = new LiveBus();
    const hands = new HandRegistry({ store: flaky, live: flakyLive, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    const h = new Harness({ store: flaky, live: flakyLive, hands, model: new StatelessModel(), leaseTtlMs: 400, storeRetryBaseMs: 5, storeRetryMaxMs: 50 });
    const stop = h.startSweeper(50);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await own.createSession({})).id);
      for (const ask of [1, 2]) {
        await Promise.all(ids.map((id) => own.emitEvent(id, userText(`ask ${ask}`))));
        for (const id of ids) void h.wake(id);
        // Settled: the log ends idle after this ask's final text, and nobody holds the lease.
        await expect
          .poll(
            async () => {
              const settled = await Promise.all(
                ids.map(async (id) => {
                  const events = await own.getEvents(id);
                  // (needing no work alone is not enough: a harness holding the lease is not listed)
                  return events.filter((e) => e.type === 'agent.message').length >= ask && events.at(-1)?.type === 'session.status_idle' && (await own.sessionsNeedingWork(50)).length === 0;
                }),
              );
              return settled.every(Boolean);
            },
            { timeout: 30_000, interval: 100 },
          )
          .toBe(true);
      }
      for (const id of ids) {
        const events = await own.getEvents(id);
        expect(checkLogInvariants(events), `${id}\n${events.map((e) => `${e.seq} ${e.type}`).join('\n')}`).toEqual([]);
        expect(events.filter((e) => e.type === 'user.message')).toHaveLength(2);
        expect(agentTexts(events)).toEqual(['done 1', 'done 2']);
      }
      const summary = `6 sessions × 2 asks: ${flaky.faults.before} calls failed before reaching the store, ${flaky.faults.after} after their commit; harness store retries ${h.storeRetries}`;
      await annotate(summary);
      process.stderr.write(`[db-outage] ${summary}\n`);
      expect(flaky.faults.before).toBeGreaterThan(0);
      expect(flaky.faults.after).toBeGreaterThan(0);
      expect(h.storeRetries).toBeGreaterThan(0);
    } finally {
      stop();
      await h.close();
      await own.close();
    }
  }, 60_000);
});
