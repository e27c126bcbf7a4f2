import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, SeqConflictError, StaleFenceError } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { newId } from '~/lib/ids';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { TRUSTED_ON_READ } from '~/server/session/payload-cache';
import { NewEvent as NewEventSchema } from '~/lib/events';
import { z } from 'zod';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * What the shared Kysely store does beyond the contract, on both databases: reads that fetch the
 * payload text only for events this process has not parsed, and appends committed together
 * (group commit) that each succeed or fail on their own.
 */

const msg = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });
const reply = (text: string): NewEvent => ({ type: 'agent.message', content: [{ type: 'text', text }] });

const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-kq-'));
let pgDb: TestDatabase | null = null;
beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_kq');
});
afterAll(async () => {
  await pgDb?.drop();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const backends: Array<[string, () => Promise<KyselySessionStore>]> = [
  ['sqlite', () => openSqliteStore({ file: path.join(dir, `s${++n}.db`) })],
  ['postgres', () => openPostgresStore({ url: pgDb!.url })],
];

/** Appends as another process would: straight into the tables, so this process never parsed them. */
async function appendElsewhere(store: KyselySessionStore, sessionId: string, events: NewEvent[]): Promise<void> {
  const { last_seq } = await store.db.selectFrom('sessions').select('last_seq').where('id', '=', sessionId).executeTakeFirstOrThrow();
  const at = new Date().toISOString();
  await store.db
    .insertInto('events')
    .values(events.map((e, i) => ({ session_id: sessionId, seq: last_seq + 1 + i, id: newId('sevt'), type: e.type, processed_at: at, payload: JSON.stringify(e) })))
    .execute();
  await store.db.updateTable('sessions').set({ last_seq: last_seq + events.length }).where('id', '=', sessionId).execute();
}

describe('reading back without a second parse', () => {
  it('trusts no event type whose schema fills a default (a row written before the default would lack it)', () => {
    for (const option of NewEventSchema.options) {
      const type = option.shape.type.value;
      const fills = Object.values(option.shape as Record<string, z.ZodType>).some((f) => f instanceof z.ZodDefault);
      expect(TRUSTED_ON_READ.has(type), type).toBe(!fills);
    }
  });
});

const texts = (events: readonly StoredEvent[]) => events.map((e) => (e.type === 'user.message' || e.type === 'agent.message' ? (e.content[0] as { text: string }).text : e.type));

describe.each(backends)('kysely store reads (%s)', (_name, open) => {
  it('reads back a row an older version wrote without a default its schema now fills, and refuses a type it does not know', async () => {
    const store = await open();
    try {
      const s = await store.createSession({});
      // session.status_idle's stop_details is filled (null) by the schema: a row without it is parsed, not trusted.
      await appendElsewhere(store, s.id, [{ type: 'session.status_idle', stop_reason: { type: 'end_turn' } } as NewEvent]);
      const [idle] = await store.getEvents(s.id);
      expect(idle).toMatchObject({ type: 'session.status_idle', stop_details: null });
      await appendElsewhere(store, s.id, [{ type: 'agent.telepathy' } as unknown as NewEvent]);
      await expect(store.getEvents(s.id, { from: 2 })).rejects.toThrow();
    } finally {
      await store.close();
    }
  });

  it('reads a log written partly by another process, whole and under every slice, with each payload in its place', async () => {
    const store = await open();
    try {
      const s = await store.createSession({});
      // Alternate: ours (parsed here on the way in) and foreign runs (never parsed here).
      await store.emitEvents(s.id, [msg('a1'), reply('a2')]);
      await appendElsewhere(store, s.id, [msg('b3'), reply('b4'), msg('b5')]);
      await store.emitEvents(s.id, [reply('c6')]);
      await appendElsewhere(store, s.id, [msg('d7'), reply('d8')]);
      const all = ['a1', 'a2', 'b3', 'b4', 'b5', 'c6', 'd7', 'd8'];

      const full = await store.getEvents(s.id);
      expect(texts(full)).toEqual(all);
      expect(full.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(full.every((e) => e.session_id === s.id && /^sevt_/.test(e.id))).toBe(true);
      expect(texts(await store.getEvents(s.id, { types: ['agent.message'] }))).toEqual(['a2', 'b4', 'c6', 'd8']);
      expect(texts(await store.getEvents(s.id, { order: 'desc', limit: 3 }))).toEqual(['d8', 'd7', 'c6']);
      expect(texts(await store.getEvents(s.id, { from: 3, to: 6, types: ['user.message'] }))).toEqual(['b3', 'b5']);
      expect(texts(await store.getEvents(s.id, { from: -2 }))).toEqual(['d7', 'd8']);
      // Read twice: the second read is served from what the first parsed.
      expect(await store.getEvents(s.id)).toEqual(full);
    } finally {
      await store.close();
    }
  });

  it('follows events another process appends, payloads and all', async () => {
    const store = await open();
    const stop = new AbortController();
    try {
      const s = await store.createSession({});
      await appendElsewhere(store, s.id, [msg('x1'), reply('x2')]);
      const got: StoredEvent[] = [];
      for await (const e of store.follow(s.id, 0, stop.signal)) {
        got.push(e);
        if (got.length === 2) break;
      }
      expect(texts(got)).toEqual(['x1', 'x2']);
    } finally {
      stop.abort();
      await store.close();
    }
  });

  it('hands each reader its own event objects', async () => {
    const store = await open();
    try {
      const s = await store.createSession({});
      await store.emitEvent(s.id, msg('mine'));
      const [first] = await store.getEvents(s.id);
      (first as { seq: number }).seq = 99;
      expect((await store.getEvents(s.id))[0]?.seq).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe.each(backends)('kysely store group commit (%s)', (_name, open) => {
  /** Sessions, each with a lease held by `owner`. */
  async function leased(store: KyselySessionStore, n: number) {
    return Promise.all(
      Array.from({ length: n }, async () => {
        const s = await store.createSession({});
        const fence = await store.acquireLease(s.id, 'owner', 60_000);
        return { id: s.id, fence: fence! };
      }),
    );
  }

  it('settles each of many appends committed together on its own: only the one with a stale fence fails', async () => {
    const store = await open();
    try {
      const sessions = await leased(store, 20);
      const stale = sessions[7]!;
      // Another owner takes the session over: the fence held here is stale.
      await store.releaseLease(stale.fence);
      await store.acquireLease(stale.id, 'other', 60_000);
      const results = await Promise.allSettled(sessions.map((s) => store.emitEvents(s.id, [msg('go'), { type: 'session.status_running' }], { fence: s.fence })));
      results.forEach((r, i) => expect(r.status, `session ${i}`).toBe(i === 7 ? 'rejected' : 'fulfilled'));
      expect((results[7] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
      // One transaction: every stored event has the batch's time.
      const stored = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
      expect(new Set(stored.map((e) => e.processed_at)).size).toBe(1);
      for (const [i, s] of sessions.entries()) {
        expect(await store.getSession(s.id)).toMatchObject(i === 7 ? { last_seq: 0, status: 'idle' } : { last_seq: 2, status: 'running' });
        expect((await store.getEvents(s.id)).map((e) => e.seq)).toEqual(i === 7 ? [] : [1, 2]);
        const row = await store.db.selectFrom('sessions').select(['last_event_type', 'updated_at']).where('id', '=', s.id).executeTakeFirstOrThrow();
        expect(row.last_event_type).toBe(i === 7 ? null : 'session.status_running');
        if (i !== 7) expect(row.updated_at).toBe(stored[0]!.processed_at);
      }
    } finally {
      await store.close();
    }
  });

  it('fails an append to an unknown session, or one expecting a stale seq, alone among appends committed together', async () => {
    const store = await open();
    try {
      const s = await store.createSession({});
      const t = await store.createSession({});
      const results = await Promise.allSettled([
        store.emitEvent(s.id, msg('s1'), { expectLastSeq: 0 }),
        store.emitEvent('sesn_01J00000000000000000000000', msg('nobody')),
        // Expects the log as it was before the first append of this same batch.
        store.emitEvent(s.id, msg('s2'), { expectLastSeq: 0 }),
        store.emitEvent(s.id, msg('s3'), { expectLastSeq: 1 }),
        store.emitEvent(t.id, msg('t1')),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(SeqConflictError);
      expect(texts(await store.getEvents(s.id))).toEqual(['s1', 's3']);
      expect(texts(await store.getEvents(t.id))).toEqual(['t1']);
    } finally {
      await store.close();
    }
  });

  it('stores a batch once when its idempotency key comes twice in one commit, and gives both callers its events', async () => {
    const store = await open();
    try {
      const s = await store.createSession({});
      const [a, b, c] = await Promise.all([
        store.emitEvents(s.id, [msg('k1'), reply('k2')], { idempotencyKey: 'retry-me' }),
        store.emitEvents(s.id, [msg('k1'), reply('k2')], { idempotencyKey: 'retry-me' }),
        store.emitEvent(s.id, msg('other')),
      ]);
      expect(b).toEqual(a);
      expect(a.map((e) => e.seq)).toEqual([1, 2]);
      expect(c.seq).toBe(3);
      expect(texts(await store.getEvents(s.id))).toEqual(['k1', 'k2', 'other']);
      // And a retry in a later commit gets the same from the database.
      expect(await store.emitEvents(s.id, [msg('k1'), reply('k2')], { idempotencyKey: 'retry-me' })).toEqual(a);
    } finally {
      await store.close();
    }
  });

  it('stores every other append of a commit whose shared insert fails on one writer-chosen id already taken, failing only that one', async () => {
    const store = await open();
    try {
      const sessions = await Promise.all(Array.from({ length: 5 }, () => store.createSession({})));
      const [taken] = await store.emitEvents(sessions[0]!.id, [msg('first')]);
      const results = await Promise.allSettled(
        sessions.map((s, i) => store.emitEvent(s.id, msg(`n${i}`), i === 3 ? { ids: [taken!.id] } : {})),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(texts(await store.getEvents(sessions[0]!.id))).toEqual(['first', 'n0']);
      expect(await store.getEvents(sessions[3]!.id)).toEqual([]);
      expect(await store.getSession(sessions[3]!.id)).toMatchObject({ last_seq: 0 });
      expect(texts(await store.getEvents(sessions[4]!.id))).toEqual(['n4']);
    } finally {
      await store.close();
    }
  });
});
