import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StaleFenceError } from '~/lib/errors';
import type { NewEvent } from '~/lib/events';
import { EVENT_SAMPLES } from '~/lib/testing/event-samples';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { type MasterKey, newMasterKey } from '~/server/vault/envelope';
import { WebhookKeys } from '~/server/vault/webhook-keys';
import { insertOutbox, lockOutboxForNewEndpoint } from '~/server/session/webhook-outbox';
import { WebhookStore } from '~/server/webhooks/webhook-store';

/**
 * The session log's status and progress events as webhooks: what an append stores is what is
 * queued (the outbox row is written in the append's transaction), whoever drains it and however
 * often. On SQLite and PostgreSQL.
 */
let dir: string;
let store: KyselySessionStore;
let webhooks: WebhookStore;
let master: MasterKey;
let pgDb: TestDatabase | null = null;
const THREAD = 'sthr_01JZ0000000000000000000000';

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_session_webhooks');
});
afterAll(async () => {
  await pgDb?.drop();
});

const open = async (kind: 'sqlite' | 'postgres'): Promise<KyselySessionStore> => (kind === 'sqlite' ? openSqliteStore({ file: path.join(dir, 'db.sqlite') }) : openPostgresStore({ url: pgDb!.url }));

const idle = (type: 'end_turn' | 'budget_reached'): NewEvent => ({ type: 'session.status_idle', stop_reason: { type }, stop_details: null });

/** An endpoint's queued events as `type session [thread]`, oldest first (delivery ids are monotonic). */
async function queued(endpointId: string): Promise<string[]> {
  const rows = await store.db.selectFrom('webhook_deliveries').select(['payload', 'event_type', 'source_id']).where('endpoint_id', '=', endpointId).orderBy('id').execute();
  return rows.map((r) => {
    const p = JSON.parse(r.payload) as { type: string; id: string; data: { id: string; type: string; session_thread_id?: string } };
    expect(p).toMatchObject({ type: 'event', id: expect.stringMatching(/^wevt_/) as string, data: { type: r.event_type, organization_id: 'paddock', workspace_id: 'default' } });
    expect(r.source_id).toMatch(/^sevt_/);
    return `${p.data.type} ${p.data.id}${p.data.session_thread_id ? ` ${p.data.session_thread_id}` : ''}`;
  });
}

const endpoint = (event_types: string[]) => webhooks.createEndpoint({ url: 'https://hooks.example.com/in', description: null, event_types });

describe.each(['sqlite', 'postgres'] as const)('session webhooks from the log on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-session-hooks-'));
    store = await open(kind);
    if (kind === 'postgres') await sql`truncate table webhook_outbox, webhook_deliveries, webhook_endpoints, events, idempotency, sessions cascade`.execute(store.db);
    master = newMasterKey();
    webhooks = new WebhookStore(store.db, new WebhookKeys(master));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('queues one event per status and progress event the log stores, naming the session (and a thread)', async () => {
    const all = await endpoint([]);
    const s = await store.createSession({});
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, EVENT_SAMPLES['agent.message'], idle('end_turn')]);
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, { type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 10 }]);
    await store.emitEvents(s.id, [
      { ...EVENT_SAMPLES['session.thread_created'], session_thread_id: THREAD },
      { type: 'session.thread_status_running', session_thread_id: THREAD, agent_name: 'worker' },
      { ...EVENT_SAMPLES['session.thread_status_idle'], session_thread_id: THREAD },
      { ...EVENT_SAMPLES['session.thread_status_terminated'], session_thread_id: THREAD },
    ]);
    await store.emitEvent(s.id, EVENT_SAMPLES['span.outcome_evaluation_end']);
    await store.emitEvent(s.id, EVENT_SAMPLES['session.updated']);
    await store.emitEvent(s.id, idle('budget_reached'));
    await store.emitEvent(s.id, { type: 'session.status_terminated' });
    // Nothing is queued before the outbox is drained (the ticker's work), all of it after.
    expect(await queued(all.id)).toEqual([]);
    expect(await webhooks.drainOutbox()).toBe(16);
    expect(await queued(all.id)).toEqual([
      `session.running ${s.id}`,
      `session.status_run_started ${s.id}`,
      `session.idled ${s.id}`,
      `session.status_idled ${s.id}`,
      `session.running ${s.id}`,
      `session.status_run_started ${s.id}`,
      `session.status_rescheduled ${s.id}`,
      `session.thread_created ${s.id} ${THREAD}`,
      `session.thread_idled ${s.id} ${THREAD}`,
      `session.thread_terminated ${s.id} ${THREAD}`,
      `session.outcome_evaluation_ended ${s.id}`,
      `session.updated ${s.id}`,
      `session.budget_reached ${s.id}`,
      `session.idled ${s.id}`,
      `session.status_idled ${s.id}`,
      `session.status_terminated ${s.id}`,
    ]);
    expect(await webhooks.drainOutbox()).toBe(0);
  });

  it('sends an endpoint only the types it subscribed to, and one subscribed to other types none', async () => {
    const idles = await endpoint(['session.status_idled', 'session.budget_reached']);
    const others = await endpoint(['agent.created', 'session.created']);
    const s = await store.createSession({});
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('budget_reached')]);
    await webhooks.drainOutbox();
    expect(await queued(idles.id)).toEqual([`session.budget_reached ${s.id}`, `session.status_idled ${s.id}`]);
    expect(await queued(others.id)).toEqual([]);
  });

  it('writes no outbox row while no endpoint wants the event, and every row once another instance registers one', async () => {
    const outbox = async () => (await store.db.selectFrom('webhook_outbox').select(['event_type', 'seq']).orderBy('seq').orderBy('event_type').execute()).map((r) => `${r.event_type} ${r.seq}`);
    const s = await store.createSession({});
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    expect(await outbox()).toEqual([]);
    // An endpoint for command events only wants none of the log's.
    const others = await endpoint(['agent.created', 'session.created']);
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    expect(await outbox()).toEqual([]);
    // Another instance (its own store handle) registers one for every event: this one's next append sees it.
    const second = await open(kind);
    const all = await new WebhookStore(second.db, new WebhookKeys(master)).createEndpoint({ url: 'https://hooks.example.com/all', description: null, event_types: [] });
    await second.close();
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    expect(await outbox()).toEqual(['session.running 5', 'session.status_run_started 5', 'session.idled 6', 'session.status_idled 6']);
    expect(await webhooks.drainOutbox()).toBe(4);
    expect(await queued(all.id)).toEqual([`session.running ${s.id}`, `session.status_run_started ${s.id}`, `session.idled ${s.id}`, `session.status_idled ${s.id}`]);
    expect(await queued(others.id)).toEqual([]);
  });

  it.runIf(kind === 'postgres')('orders an endpoint made on another instance against appends in flight: none loses an event committed after it', async () => {
    const outbox = async () => (await store.db.selectFrom('webhook_outbox').select('event_type').execute()).map((r) => r.event_type);
    const s = await store.createSession({});
    const second = await open(kind);
    // Released in `finally` too: a failed expectation must not leave a transaction holding the table.
    let release = () => {};
    let commit = () => {};
    try {
      // 1. An append that found no endpoint and has not committed: a new endpoint waits for it.
      const held = new Promise<void>((r) => (release = r));
      let tested!: () => void;
      const testedYet = new Promise<void>((r) => (tested = r));
      const inFlight = second.db.transaction().execute(async (trx) => {
        await insertOutbox(trx, [{ source_id: 'sevt_in_flight', event_type: 'session.status_idled', session_id: s.id, session_thread_id: null, seq: 1, occurred_at: new Date().toISOString() }]);
        tested();
        await held;
      });
      await testedYet;
      let made = false;
      const creating = endpoint([]).then((e) => ((made = true), e));
      await new Promise((r) => setTimeout(r, 300));
      expect(made).toBe(false);
      release();
      await inFlight;
      const first = await creating;
      expect(await outbox()).toEqual([]);
      // 2. An endpoint being made on another instance: an append waits for it, then sees it.
      const committed = new Promise<void>((r) => (commit = r));
      let locked!: () => void;
      const lockedYet = new Promise<void>((r) => (locked = r));
      const making = second.db.transaction().execute(async (trx) => {
        await lockOutboxForNewEndpoint(trx);
        await trx.insertInto('webhook_endpoints').values({ id: 'wh_other_instance', url: 'https://hooks.example.com/b', description: null, event_types: '["session.status_idled"]', sealed_key: 'sealed', created_at: new Date().toISOString(), disabled_at: null }).execute();
        locked();
        await committed;
      });
      await lockedYet;
      await sql`delete from webhook_endpoints where id = ${first.id}`.execute(store.db);
      let appended = false;
      const append = store.emitEvent(s.id, idle('end_turn')).then(() => (appended = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(appended).toBe(false);
      commit();
      await making;
      await append;
      expect(await outbox()).toEqual(['session.status_idled']);
    } finally {
      release();
      commit();
      await second.close();
    }
  });

  it('queues one delivery for an event processed twice (the unique key on endpoint, log event and type)', async () => {
    const all = await endpoint(['session.status_run_started', 'session.status_idled']);
    const s = await store.createSession({});
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    const rows = await store.db.selectFrom('webhook_outbox').selectAll().execute();
    expect(rows).toHaveLength(2);
    await webhooks.drainOutbox();
    // The same outbox rows again, as a second processing of the same log events would see them.
    await store.db.insertInto('webhook_outbox').values(rows).execute();
    expect(await webhooks.drainOutbox()).toBe(2);
    expect(await queued(all.id)).toEqual([`session.status_run_started ${s.id}`, `session.status_idled ${s.id}`]);
    expect(await store.db.selectFrom('webhook_outbox').selectAll().execute()).toEqual([]);
  });

  it('queues nothing for an append that is refused (a stale fence): the outbox row is in its transaction', async () => {
    const all = await endpoint([]);
    const s = await store.createSession({});
    await expect(store.emitEvent(s.id, idle('end_turn'), { fence: { sessionId: s.id, owner: 'gone', epoch: 7 } })).rejects.toBeInstanceOf(StaleFenceError);
    expect(await webhooks.drainOutbox()).toBe(0);
    expect(await queued(all.id)).toEqual([]);
  });

  it('queues the events of a writer that stopped right after its append, from another instance that drains later', async () => {
    const all = await endpoint(['session.status_run_started', 'session.status_idled']);
    const s = await store.createSession({});
    await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    // The writer is gone (its store closed, nothing else done); another instance opens the database.
    await store.close();
    store = await open(kind);
    const other = new WebhookStore(store.db, new WebhookKeys(master));
    expect(await other.drainOutbox()).toBe(2);
    expect(await queued(all.id)).toEqual([`session.status_run_started ${s.id}`, `session.status_idled ${s.id}`]);
  });

  it('queues each event once when instances drain at the same time', async () => {
    const all = await endpoint(['session.status_run_started', 'session.status_idled']);
    const sessions = await Promise.all(Array.from({ length: 5 }, () => store.createSession({})));
    for (const s of sessions) await store.emitEvents(s.id, [{ type: 'session.status_running' }, idle('end_turn')]);
    // PostgreSQL: another instance with its own connections. SQLite has one instance per file
    // (two connections in one process would block each other's event loop): racing passes of it.
    const second = kind === 'postgres' ? await open(kind) : null;
    try {
      const racer = second ? new WebhookStore(second.db, new WebhookKeys(master)) : webhooks;
      const taken = await Promise.all([webhooks.drainOutbox(), racer.drainOutbox(), webhooks.drainOutbox(), racer.drainOutbox()]);
      expect(taken.reduce((a, b) => a + b, 0)).toBe(10);
    } finally {
      await second?.close();
    }
    const got = await queued(all.id);
    expect(got).toHaveLength(10);
    for (const s of sessions) expect(got.filter((g) => g.endsWith(s.id))).toEqual([`session.status_run_started ${s.id}`, `session.status_idled ${s.id}`]);
  });
});
