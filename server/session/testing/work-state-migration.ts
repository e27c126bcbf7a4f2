import { type Kysely, sql } from 'kysely';
import { expect } from 'vitest';
import type { NewEvent } from '~/lib/events';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { migrations } from '~/server/session/migrations';

const msg = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });

/**
 * Migration 0003 on a store's own database (SQLite or PostgreSQL): sessions whose row the old
 * rule left looking busy because of a side event are recomputed; a session that does need work
 * stays listed.
 */
export async function checkWorkStateMigration(store: KyselySessionStore): Promise<void> {
  const settled = await store.createSession({});
  await store.emitEvents(settled.id, [msg('q'), { type: 'session.status_running' }, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null }]);
  await store.emitEvent(settled.id, { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' });
  const onlyHands = await store.createSession({});
  await store.emitEvent(onlyHands.id, { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' });
  const asked = await store.createSession({});
  await store.emitEvents(asked.id, [msg('q'), { type: 'hand.lost', hand: 'sandbox-1', reason: 'gone' }]);
  // The rows as the old rule wrote them: the newest event's type, side event or not.
  await sql`update sessions set last_event_type = (select e.type from events e where e.session_id = sessions.id order by e.seq desc limit 1)`.execute(store.db);
  expect((await store.sessionsNeedingWork(10)).map((w) => w.id).sort()).toEqual([settled.id, onlyHands.id, asked.id].sort());

  const migration = migrations['0003_session_work_state']!;
  await migration.down!(store.db as Kysely<unknown>);
  await migration.up(store.db as Kysely<unknown>);
  expect(await store.sessionsNeedingWork(10)).toEqual([{ id: asked.id, leaseExpired: false }]);
  const { rows } = await sql<{ id: string; last_event_type: string | null }>`select id, last_event_type from sessions`.execute(store.db);
  expect(Object.fromEntries(rows.map((r) => [r.id, r.last_event_type]))).toMatchObject({
    [settled.id]: 'session.status_idle',
    [onlyHands.id]: null,
    [asked.id]: 'user.message',
  });
}
