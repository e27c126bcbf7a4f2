import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { newId } from '~/lib/ids';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * What the shared Kysely store does beyond the contract, on both databases: reads that fetch the
 * payload text only for events this process has not parsed.
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

const texts = (events: readonly StoredEvent[]) => events.map((e) => (e.type === 'user.message' || e.type === 'agent.message' ? (e.content[0] as { text: string }).text : e.type));

describe.each(backends)('kysely store reads (%s)', (_name, open) => {
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
