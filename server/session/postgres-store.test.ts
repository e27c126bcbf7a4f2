import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StaleFenceError } from '~/lib/errors';
import type { LiveDelta, NewEvent, StoredEvent } from '~/lib/events';
import { migrateToLatest } from '~/server/session/migrations';
import { PgNotifier, openPgNotifier } from '~/server/session/pg-notifier';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { runStoreContract } from '~/server/session/store-contract';
import { checkWorkStateMigration } from '~/server/session/testing/work-state-migration';
import { checkListColumnsMigration } from '~/server/session/testing/list-columns-migration';
import { type TestDatabase, createTestDatabase, withAdmin } from '~/server/session/testing/pg-test-db';

/**
 * The Postgres store against a real server: the shared contract, then what only several server
 * instances on one database can show. Each file run gets its own database, dropped at the end.
 * PostgreSQL must be running (scripts/ensure-postgres.sh starts the local one): without it the
 * suite fails, it is never skipped.
 */
let db: TestDatabase | null = null;
let url = '';
beforeAll(async () => {
  db = await createTestDatabase('paddock_test');
  url = db.url;
});

afterAll(async () => {
  // The drop uses `force`: it ends connections a failed test may have left open.
  await db?.drop();
});

const msg = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A fresh store on an emptied database: the contract assumes nothing else is in it. */
async function freshStore(): Promise<PostgresSessionStore> {
  const store = await openPostgresStore({ url });
  await sql`truncate table call_claims, hand_tabs, idempotency, events, sessions`.execute(store.db);
  return store;
}

runStoreContract('postgres', freshStore);

/** Follows a session in the background, and lets a test wait until a given seq has arrived. */
function follower(store: PostgresSessionStore, sessionId: string) {
  const ac = new AbortController();
  const arrivedAt = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  const done = (async () => {
    for await (const e of store.follow(sessionId, 0, ac.signal)) {
      arrivedAt.set(e.seq, performance.now());
      waiters.get(e.seq)?.();
    }
  })();
  return {
    arrivedAt,
    /** Resolves with the arrival time of `seq`, or rejects after `timeoutMs`. */
    waitFor(seq: number, timeoutMs = 5_000): Promise<number> {
      const at = arrivedAt.get(seq);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`seq ${seq} did not arrive within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(seq, () => {
          clearTimeout(timer);
          waiters.delete(seq);
          resolve(arrivedAt.get(seq)!);
        });
      });
    },
    async stop(): Promise<void> {
      ac.abort();
      await done;
    },
  };
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('postgres store: two server instances on one database', () => {
  let a: PostgresSessionStore;
  let b: PostgresSessionStore;

  beforeAll(async () => {
    // Two pools and two LISTEN connections: what two `next start` processes would hold.
    a = await openPostgresStore({ url });
    b = await openPostgresStore({ url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('reads lease_expires_at (bigint) as a number, leaving pg’s global int8 parser alone', async () => {
    const s = await a.createSession({});
    await a.acquireLease(s.id, 'harness-a', 10_000);
    const row = await a.db.selectFrom('sessions').select('lease_expires_at').where('id', '=', s.id).executeTakeFirstOrThrow();
    expect(typeof row.lease_expires_at).toBe('number');
    expect(row.lease_expires_at).toBeGreaterThan(Date.now());
    const globalInt8 = pg.types.getTypeParser(20, 'text') as (value: string) => unknown;
    expect(globalInt8('42')).toBe('42');
  });

  it('runs the shared migrations once: re-running them is a no-op', async () => {
    expect(await migrateToLatest(b.db)).toEqual([]);
  });

  it('wakes a follower on B for every append through A (LISTEN/NOTIFY), p95 < 250 ms', async ({ annotate }) => {
    const s = await a.createSession({});
    const f = follower(b, s.id);
    const latencies: number[] = [];
    try {
      for (const i of range(1, 50)) {
        const start = performance.now();
        const e = await a.emitEvent(s.id, msg(`m${i}`));
        latencies.push((await f.waitFor(e.seq)) - start);
        // Let the follower go back to sleep, so each append measures a real wake-up.
        await sleep(5);
      }
    } finally {
      await f.stop();
    }
    const sorted = [...latencies].sort((x, y) => x - y);
    const summary = `append on A → event on B's follower, 50 appends: p50 ${percentile(sorted, 50).toFixed(1)} ms, p95 ${percentile(sorted, 95).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`;
    await annotate(summary);
    process.stderr.write(`[postgres-store] ${summary}\n`);
    expect(percentile(sorted, 95)).toBeLessThan(250);
  });

  it('gives 50 concurrent emitters split across A and B contiguous seqs 1..50', async () => {
    const s = await a.createSession({});
    const stored = await Promise.all(range(1, 50).map((i) => (i % 2 === 0 ? a : b).emitEvent(s.id, msg(`m${i}`))));
    expect(stored.map((e) => e.seq).sort((x, y) => x - y)).toEqual(range(1, 50));
    expect((await a.getEvents(s.id)).map((e) => e.seq)).toEqual(range(1, 50));
    expect(await b.getEvents(s.id)).toEqual(await a.getEvents(s.id));
    expect((await b.getSession(s.id))?.last_seq).toBe(50);
  });

  it('commits A’s and B’s batches over the same sessions, appended in opposite orders, without a deadlock', async () => {
    const sessions = await Promise.all(range(1, 30).map(() => a.createSession({})));
    const ids = sessions.map((s) => s.id);
    // Each round is one batch per instance; their session row locks are taken in id order.
    for (const round of range(1, 5)) {
      await Promise.all([
        ...ids.map((id) => a.emitEvent(id, msg(`a${round}`))),
        ...[...ids].reverse().map((id) => b.emitEvent(id, msg(`b${round}`))),
      ]);
    }
    for (const id of ids) expect((await a.getEvents(id)).map((e) => e.seq)).toEqual(range(1, 10));
  });

  it('stores a batch once when A and B race with the same idempotency key', async () => {
    const s = await a.createSession({});
    const batch = [msg('x'), msg('y')];
    const results = await Promise.all(range(1, 10).map((i) => (i % 2 === 0 ? a : b).emitEvents(s.id, batch, { idempotencyKey: 'turn-1' })));
    for (const r of results) expect(r).toEqual(results[0]);
    expect((await a.getEvents(s.id)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('blocks B while A holds the lease; after expiry B gets a higher epoch and A is fenced off', async () => {
    const s = await a.createSession({});
    await a.emitEvent(s.id, msg('please'));
    const fenceA = (await a.acquireLease(s.id, 'instance-a', 500))!;
    expect(fenceA).not.toBeNull();
    expect(await b.acquireLease(s.id, 'instance-b', 10_000)).toBeNull();
    expect((await b.sessionsNeedingWork(10)).map((w) => w.id)).not.toContain(s.id);
    expect((await a.emitEvent(s.id, { type: 'session.status_running' }, { fence: fenceA })).seq).toBe(2);

    await sleep(600);
    expect((await b.sessionsNeedingWork(100)).map((w) => w.id)).toContain(s.id);
    const fenceB = (await b.acquireLease(s.id, 'instance-b', 10_000))!;
    expect(fenceB.epoch).toBeGreaterThan(fenceA.epoch);
    await expect(a.emitEvent(s.id, msg('zombie'), { fence: fenceA })).rejects.toBeInstanceOf(StaleFenceError);
    expect(await a.renewLease(fenceA, 10_000)).toBe(false);
    expect((await b.emitEvent(s.id, msg('live'), { fence: fenceB })).seq).toBe(3);
  });

  it('times leases by the database’s clock, so an instance whose clock is an hour off cannot steal or squat one', async () => {
    const realNow = Date.now.bind(Date);
    const skewed = (offsetMs: number) => vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
    const s = await a.createSession({});
    await a.emitEvent(s.id, msg('please'));
    // A's clock runs an hour slow: by its own clock its lease would be long expired at once.
    const slow = skewed(-3_600_000);
    const fenceA = await a.acquireLease(s.id, 'instance-a', 10_000);
    slow.mockRestore();
    expect(fenceA).not.toBeNull();
    expect(await b.acquireLease(s.id, 'instance-b', 10_000)).toBeNull();
    expect((await b.sessionsNeedingWork(100)).map((w) => w.id)).not.toContain(s.id);
    await a.releaseLease(fenceA!);
    // B's clock runs an hour fast: a 300 ms lease must still end after 300 ms, not in an hour.
    const fast = skewed(3_600_000);
    const fenceB = await b.acquireLease(s.id, 'instance-b', 300);
    fast.mockRestore();
    expect(fenceB).not.toBeNull();
    await sleep(400);
    expect(await a.acquireLease(s.id, 'instance-a', 10_000)).not.toBeNull();
  });

  it('hands a free lease to exactly one of many concurrent acquirers on A and B', async () => {
    const s = await a.createSession({});
    const fences = await Promise.all(range(1, 10).map((i) => (i % 2 === 0 ? a : b).acquireLease(s.id, `worker-${i}`, 10_000)));
    const winners = fences.filter((f) => f !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.epoch).toBe(1);
  });

  it('re-establishes a terminated LISTEN connection, and followers still get every event', async () => {
    const s = await a.createSession({});
    const f = follower(b, s.id);
    const listenerOf = (store: PostgresSessionStore) => {
      if (!(store.notifier instanceof PgNotifier)) throw new Error('expected the store’s own PgNotifier');
      return store.notifier;
    };
    const terminate = async (store: PostgresSessionStore) => {
      const pid = listenerOf(store).listenerPid;
      expect(pid).not.toBeNull();
      await withAdmin((c) => c.query('select pg_terminate_backend($1)', [pid]));
      return pid;
    };
    const reconnected = async (store: PostgresSessionStore, oldPid: number | null) => {
      for (let i = 0; i < 200; i++) {
        const pid = listenerOf(store).listenerPid;
        if (pid !== null && pid !== oldPid) return;
        await sleep(25);
      }
      throw new Error('LISTEN connection was not re-established');
    };
    try {
      await a.emitEvent(s.id, msg('before'));
      await f.waitFor(1);

      // The follower's side drops: an append made meanwhile still arrives (at the latest through
      // the wake-up every subscriber gets after the reconnect), and later ones arrive as usual.
      const oldB = await terminate(b);
      await a.emitEvent(s.id, msg('while B is down'));
      await f.waitFor(2);
      await reconnected(b, oldB);
      await a.emitEvent(s.id, msg('after B is back'));
      await f.waitFor(3, 2_000);

      // The sender's side drops: its hint is kept and sent once it is back.
      const oldA = await terminate(a);
      await a.emitEvent(s.id, msg('while A is down'));
      await f.waitFor(4);
      await reconnected(a, oldA);
      await a.emitEvent(s.id, msg('after A is back'));
      await f.waitFor(5, 2_000);
    } finally {
      await f.stop();
    }
    expect([...f.arrivedAt.keys()]).toEqual(range(1, 5));
  });

  it('ends its follows on close and leaves no subscription behind', async () => {
    const store = await openPostgresStore({ url });
    const s = await store.createSession({});
    await store.emitEvent(s.id, msg('hi'));
    const seen: StoredEvent[] = [];
    const following = (async () => {
      for await (const e of store.follow(s.id, 0, new AbortController().signal)) seen.push(e);
    })();
    await sleep(30);
    expect((store.notifier as PgNotifier).subscribedSessions).toBe(1);
    await store.close();
    await expect(following).resolves.toBeUndefined();
    expect(seen.map((e) => e.seq)).toEqual([1]);
    expect((store.notifier as PgNotifier).subscribedSessions).toBe(0);
  });
});

describe('postgres migrations', () => {
  it('migration 0013 fills the list columns of sessions stored before it from their logs', async () => {
    const store = await freshStore();
    try {
      await checkListColumnsMigration(store);
    } finally {
      await store.close();
    }
  });

  it('migration 0003 recomputes last_event_type of sessions that a side event left needing work', async () => {
    const store = await freshStore();
    try {
      await checkWorkStateMigration(store);
    } finally {
      await store.close();
    }
  });
});

describe('pg notifier', () => {
  it('hands a hint to local subscribers at once, and to another instance through the database', async () => {
    const one = await openPgNotifier({ url, sweepMs: 0 });
    const two = await openPgNotifier({ url, sweepMs: 0 });
    try {
      const local: number[] = [];
      const remote = new Promise<number>((resolve) => two.subscribe('sesn_x', resolve));
      one.subscribe('sesn_x', (seq) => local.push(seq));
      one.notify('sesn_x', 7);
      // Synchronously: no round trip for subscribers in the same process.
      expect(local).toEqual([7]);
      expect(await remote).toBe(7);
      await sleep(50);
      // Our own NOTIFY comes back on our LISTEN connection; it is not delivered twice.
      expect(local).toEqual([7]);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('wakes every subscriber periodically, bounding the delay a lost notification can cause', async () => {
    const n = await openPgNotifier({ url, sweepMs: 40 });
    try {
      const woken = new Promise<void>((resolve) => n.subscribe('sesn_y', () => resolve()));
      await expect(woken).resolves.toBeUndefined();
    } finally {
      await n.close();
    }
  });

  it('relays live deltas to another instance, in order, and not back to the sender', async () => {
    const one = await openPgNotifier({ url, sweepMs: 0 });
    const two = await openPgNotifier({ url, sweepMs: 0 });
    try {
      const echoed: LiveDelta[] = [];
      one.subscribeLive((d) => echoed.push(d));
      const words = Array.from({ length: 300 }, (_, i) => ` w${i}`);
      let text = '';
      const hands: LiveDelta[] = [];
      const all = new Promise<void>((resolve) =>
        two.subscribeLive((d) => {
          if (d.kind === 'text') text += d.text;
          else hands.push(d);
          if (text.length === words.join('').length && hands.length === 2) resolve();
        }),
      );
      let deltas = 0;
      const counted = two.subscribeLive((d) => void (d.kind === 'text' && deltas++));
      const hand: LiveDelta = { kind: 'hand', session_id: 'sesn_live', hand: 'sandbox-1', hand_kind: 'sandbox', phase: 'starting' };
      const token = (w: string): LiveDelta => ({ kind: 'text', session_id: 'sesn_live', model_request_start_id: 'sevt_1', index: 0, text: w });
      // The first token goes out at once; what follows is queued while it is sent, and goes out
      // in one statement. Identical deltas in it: PostgreSQL folds identical payloads of one
      // statement into one, so ours are numbered.
      one.publishLive(token(words[0]!));
      one.publishLive(hand);
      one.publishLive(hand);
      for (const w of words.slice(1)) one.publishLive(token(w));
      await all;
      counted();
      expect(text).toBe(words.join(''));
      expect(hands).toEqual([hand, hand]);
      // Tokens queued while a send was under way went out together.
      expect(deltas).toBeLessThan(words.length);
      await sleep(50);
      expect(echoed).toEqual([]);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('cuts a delta too large for one NOTIFY into pieces that add up to it', async () => {
    const one = await openPgNotifier({ url, sweepMs: 0 });
    const two = await openPgNotifier({ url, sweepMs: 0 });
    try {
      // 20k characters, some of them escaped in JSON and some outside the BMP: far over 8000 bytes.
      const text = Array.from({ length: 2_000 }, (_, i) => `${i % 7 === 0 ? '"\n' : 'é'}🙂x${i}`).join('').slice(0, 20_000);
      let joined = '';
      const done = new Promise<void>((resolve) =>
        two.subscribeLive((d) => {
          if (d.kind !== 'tool_input') return;
          joined += d.partial_json;
          if (joined.length >= text.length) resolve();
        }),
      );
      one.publishLive({ kind: 'tool_input', session_id: 'sesn_big', model_request_start_id: 'sevt_2', index: 1, name: 'write', partial_json: text });
      await done;
      expect(joined).toBe(text);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('fails to open when the database cannot be reached', async () => {
    const bad = new URL(url);
    bad.port = '1';
    await expect(openPgNotifier({ url: bad.toString() })).rejects.toThrow();
  });
});
