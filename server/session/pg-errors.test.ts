import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailable } from '~/lib/errors';
import { isConnectionError, toStoreError } from '~/server/session/pg-errors';
import { type PostgresSessionStore, openPostgresStore } from '~/server/session/postgres-store';
import { type PrivatePostgres, createPrivatePostgres } from '~/server/session/testing/private-postgres';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('connection-level PostgreSQL errors', () => {
  it('counts refused, reset, shut-down and lost connections as the store being unreachable', () => {
    for (const e of [
      withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      withCode('ECONNRESET', 'read ECONNRESET'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P02', 'terminating connection because of crash of another server process'),
      withCode('57P03', 'the database system is starting up'),
      withCode('08006', 'connection failure'),
      withCode('08001'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed'),
    ]) {
      expect(isConnectionError(e), e.message).toBe(true);
      const mapped = toStoreError(e);
      expect(isStoreUnavailable(mapped), e.message).toBe(true);
      expect((mapped as Error).message).toBe('the session store (PostgreSQL) is unreachable; retrying');
      expect((mapped as Error).cause).toBe(e);
    }
  });

  it('leaves query errors (syntax, constraint, serialization) as they are', () => {
    for (const e of [
      withCode('42601', 'syntax error at or near "selec"'),
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('40001', 'could not serialize access'),
      withCode('57014', 'canceling statement due to user request'),
      new Error('Cannot use a pool after calling end on the pool'),
      'not an error',
    ]) {
      expect(isConnectionError(e)).toBe(false);
      expect(toStoreError(e)).toBe(e);
    }
  });
});

describe('the PostgreSQL store across connection loss (private cluster)', () => {
  let cluster: PrivatePostgres;
  let store: PostgresSessionStore;

  beforeAll(async () => {
    cluster = await createPrivatePostgres();
    store = await openPostgresStore({ url: cluster.url(), poolSize: 4 });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await cluster?.cleanup();
  });

  it('fails a transaction whose connection dies between two statements with StoreUnavailableError, without an uncaught exception', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    try {
      const failure = await store.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // The server ends this connection while no statement runs on it: pg emits 'error' on
          // the checked-out client, which without a listener crashes the process.
          await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(trx);
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isStoreUnavailable(failure)).toBe(true);
      expect(uncaught).toEqual([]);
      // The broken client was discarded, not handed out again.
      for (let i = 0; i < 8; i++) expect(await store.getSession('sesn_none')).toBeNull();
    } finally {
      process.off('uncaughtException', onUncaught);
      await admin.end();
    }
  });

  it('reports calls during an outage as StoreUnavailableError and serves the next ones on fresh connections once it is back', async () => {
    const s = await store.createSession({});
    // Warm every pooled connection, so the restart leaves them all broken.
    await Promise.all(Array.from({ length: 4 }, () => store.getEvents(s.id)));
    await cluster.stop('fast');
    try {
      const during = await store.getSession(s.id).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isStoreUnavailable(during)).toBe(true);
    } finally {
      await cluster.start();
    }
    // Every call succeeds at its first attempt: no dead connection is reused.
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: `m${i}` }] })));
    expect(results.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});
