import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { NewEvent } from '~/lib/events';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { migrations } from '~/server/session/migrations';

const msg = (type: 'user.message' | 'agent.message', text: string): NewEvent => ({ type, content: [{ type: 'text', text }] });

/**
 * Migration 0013 on a store's own database (SQLite or PostgreSQL): sessions stored before it get
 * their list columns from their logs: the newest message's first line, and "approval" for an idle
 * session whose newest status event waits on a call that asks first.
 */
export async function checkListColumnsMigration(store: KyselySessionStore): Promise<void> {
  const answered = await store.createSession({});
  await store.emitEvents(answered.id, [msg('user.message', 'q'), { type: 'session.status_running' }, msg('agent.message', '\nAll done.\nDetails follow.'), { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null }]);
  await store.emitEvent(answered.id, { type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' });
  const asking = await store.createSession({});
  const [, call] = await store.emitEvents(asking.id, [msg('user.message', 'delete it'), { type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' }]);
  await store.emitEvent(asking.id, { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] }, stop_details: null });
  const empty = await store.createSession({});

  const migration = migrations['0013_session_list_columns']!;
  await migration.down!(store.db as Kysely<unknown>);
  await migration.up(store.db as Kysely<unknown>);
  expect(await store.getSession(answered.id)).toMatchObject({ last_message: 'All done.', waiting_on: null });
  expect(await store.getSession(asking.id)).toMatchObject({ last_message: 'delete it', waiting_on: 'approval' });
  expect(await store.getSession(empty.id)).toMatchObject({ last_message: null, waiting_on: null });
}
