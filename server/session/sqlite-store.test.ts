import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '~/lib/events';
import { migrateToLatest } from '~/server/session/migrations';
import { InProcessNotifier, WakeUp } from '~/server/session/notifier';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { runStoreContract } from '~/server/session/store-contract';
import { checkWorkStateMigration } from '~/server/session/testing/work-state-migration';
import { checkListColumnsMigration } from '~/server/session/testing/list-columns-migration';

const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-store-'));
let n = 0;
const freshFile = () => path.join(dir, `store-${++n}`, 'paddock.db');

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const msg = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });

runStoreContract('sqlite (file, WAL)', () => openSqliteStore({ file: freshFile() }));

describe('sqlite store', () => {
  it('opens the file in WAL mode with synchronous FULL, foreign keys and a busy timeout', async () => {
    const store = await openSqliteStore({ file: freshFile() });
    try {
      const pragma = async (name: string) => {
        const { rows } = await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(store.db);
        return rows[0] ? Object.values(rows[0])[0] : undefined;
      };
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('synchronous')).toBe(2);
      expect(await pragma('foreign_keys')).toBe(1);
      expect(await pragma('busy_timeout')).toBe(5000);
    } finally {
      await store.close();
    }
  });

  it('migration 0013 fills the list columns of sessions stored before it from their logs', async () => {
    const store = await openSqliteStore({ file: freshFile() });
    try {
      await checkListColumnsMigration(store);
    } finally {
      await store.close();
    }
  });

  it('migration 0003 recomputes last_event_type of sessions that a side event left needing work', async () => {
    const store = await openSqliteStore({ file: freshFile() });
    try {
      await checkWorkStateMigration(store);
    } finally {
      await store.close();
    }
  });

  it('keeps sessions and events across a reopen, where re-running migrations is a no-op', async () => {
    const file = freshFile();
    const first = await openSqliteStore({ file });
    const s = await first.createSession({ title: 'durable' });
    const written = await first.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'k' });
    await first.close();

    const second = await openSqliteStore({ file });
    try {
      expect(await second.getSession(s.id)).toMatchObject({ title: 'durable', last_seq: 3 });
      expect(await second.getEvents(s.id)).toEqual(written);
      expect(await second.emitEvents(s.id, [msg('a')], { idempotencyKey: 'k' })).toEqual(written);
      expect(await migrateToLatest(second.db)).toEqual([]);
      expect((await second.emitEvent(s.id, msg('d'))).seq).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('rolls back a transaction that fails after its first writes', async () => {
    const store = await openSqliteStore({ file: freshFile() });
    try {
      const s = await store.createSession({});
      // Fail the session-row update, which runs after the events are inserted.
      await sql`create trigger boom before update of last_seq on sessions when new.last_seq = 3
        begin select raise(abort, 'boom'); end`.execute(store.db);
      await expect(store.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'k' })).rejects.toThrow(/boom/);
      expect(await store.getEvents(s.id)).toEqual([]);
      expect(await store.getSession(s.id)).toMatchObject({ last_seq: 0 });

      await sql`drop trigger boom`.execute(store.db);
      // Nothing of the failed attempt lingers: not its rows, not its idempotency key.
      expect((await store.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'k' })).map((e) => e.seq)).toEqual([1, 2, 3]);
    } finally {
      await store.close();
    }
  });

  it('creates the parent directory and also runs in memory', async () => {
    const nested = path.join(dir, 'a', 'b', 'c', 'paddock.db');
    const onDisk = await openSqliteStore({ file: nested });
    await onDisk.close();
    const inMemory = await openSqliteStore({ file: ':memory:' });
    try {
      const s = await inMemory.createSession({});
      expect((await inMemory.emitEvent(s.id, msg('hi'))).seq).toBe(1);
    } finally {
      await inMemory.close();
    }
  });

  it('drops its subscription when a follow ends, and ends a follow when the store closes', async () => {
    const notifier = new InProcessNotifier();
    const store = await openSqliteStore({ file: freshFile(), notifier });
    const s = await store.createSession({});
    await store.emitEvent(s.id, msg('hi'));
    for await (const _ of store.follow(s.id, 0, new AbortController().signal)) break;
    expect(notifier.subscribedSessions).toBe(0);

    const following = (async () => {
      for await (const _ of store.follow(s.id, 0, new AbortController().signal)) {
        // the log holds one event; after it, the follower sleeps until close
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.close();
    await expect(following).resolves.toBeUndefined();
    expect(notifier.subscribedSessions).toBe(0);
  });
});

describe('in-process notifier', () => {
  const settled = (p: Promise<void>) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20))]);

  it('remembers a hint that arrived before wait(), so a read-then-wait loop cannot sleep past it', async () => {
    const notifier = new InProcessNotifier();
    const wake = new WakeUp(notifier, 'sesn_a');
    const signal = new AbortController().signal;
    notifier.notify('sesn_a', 1);
    expect(await settled(wake.wait(signal))).toBe(true);
    // Consumed: the next wait sleeps until a new hint, and hints for other sessions do not count.
    const next = wake.wait(signal);
    notifier.notify('sesn_b', 1);
    expect(await settled(next)).toBe(false);
    notifier.notify('sesn_a', 2);
    expect(await settled(next)).toBe(true);
    wake.close();
  });

  it('wakes a waiter on abort and on close, and unsubscribes on close', async () => {
    const notifier = new InProcessNotifier();
    const wake = new WakeUp(notifier, 'sesn_a');
    const ac = new AbortController();
    const aborted = wake.wait(ac.signal);
    ac.abort();
    expect(await settled(aborted)).toBe(true);
    const closed = wake.wait(new AbortController().signal);
    wake.close();
    expect(await settled(closed)).toBe(true);
    expect(notifier.subscribedSessions).toBe(0);
  });
});
