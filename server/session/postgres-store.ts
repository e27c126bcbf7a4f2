import 'server-only';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { errorFields, logger } from '~/server/log';
import { KyselySessionStore } from '~/server/session/kysely-queries';
import { storeErrorsPool, toStoreError } from '~/server/session/pg-errors';
import { migrateToLatest } from '~/server/session/migrations';
import type { Notifier } from '~/server/session/notifier';
import { openPgNotifier } from '~/server/session/pg-notifier';
import type { Database } from '~/server/session/schema';

const log = logger('postgres-store');

/** PostgreSQL's type oid for int8 (bigint). */
const INT8_OID = 20;
/** How long a checkout may wait for a new connection before the store is reported unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface PostgresStoreOptions {
  /** Connection string, e.g. postgres://user@host:5432/paddock. */
  url: string;
  /**
   * Wake-up hints for follow(). By default the store opens a PgNotifier (LISTEN/NOTIFY) on the same
   * database, so followers on any server instance see appends from every other, and closes it on
   * close(). A notifier passed in belongs to the caller.
   */
  notifier?: Notifier;
  /** Most connections the store's pool opens (default 10); the notifier holds one more. */
  poolSize?: number;
}

/**
 * Opens (migrating if needed) the session store on PostgreSQL, for several server instances
 * sharing one database. Same schema, migrations and queries as the SQLite store
 * (kysely-queries.ts); only transactions differ, see PostgresSessionStore.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresSessionStore> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: 'paddock',
    types: int8AsNumber(),
    // An unreachable host fails a checkout instead of queueing every request behind it forever.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // An idle pooled connection that dies (server restart, terminated backend) is reported here;
  // without a listener the pool would crash the process. The pool replaces it on next use.
  pool.on('error', (e) => log.warn('idle connection lost', errorFields(e)));
  // A connection can also die while checked out between two statements of a transaction, with no
  // query to fail: pg then emits 'error' on the client, which (pg-pool listens only while it is
  // idle) would be an uncaught exception. The next statement fails instead (StoreUnavailableError)
  // and pg-pool discards the client on release, as it is no longer queryable. Debug only: an idle
  // client's loss is already logged above.
  pool.on('connect', (client) => client.on('error', (e) => log.debug('connection lost', errorFields(e))));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: storeErrorsPool(pool) }) });
  try {
    // Kysely's migrator takes a row lock first, so instances starting together migrate once.
    await migrateToLatest(db);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  if (options.notifier) return new PostgresSessionStore(db, options.notifier, null);
  try {
    const own = await openPgNotifier({ url: options.url });
    return new PostgresSessionStore(db, own, own);
  } catch (e) {
    await db.destroy();
    throw toStoreError(e);
  }
}

/**
 * The shared Kysely store on PostgreSQL. Appends that arrive together share one READ COMMITTED
 * transaction (group commit, as on SQLite: a few statements per batch instead of five round trips
 * per append), which first locks the batch's session rows (`select … for update`, in id order, so
 * two instances' batches never deadlock): appenders of one session, from any process, queue on
 * that lock and each reads the last_seq its predecessor committed, so seqs stay contiguous.
 * Multi-statement reads run in one REPEATABLE READ snapshot.
 */
export class PostgresSessionStore extends KyselySessionStore {
  constructor(db: Kysely<Database>, notifier: Notifier, ownedNotifier: { close(): Promise<void> } | null) {
    super(db, notifier, {
      appendTransaction: (work) => db.transaction().execute(work),
      readSnapshot: (work) => db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work),
      lockSessionRow: true,
      // Instances' clocks may disagree; the database's clock is the one they share.
      leaseClock: () => sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`,
      afterClose: async () => {
        await ownedNotifier?.close();
      },
    });
  }
}

/**
 * node-postgres returns int8 as a string (it may exceed 2^53). Our only bigint column holds epoch
 * milliseconds, far below that, and the schema types it as a number. The parser is set on this
 * pool's own type table, leaving pg's global one untouched for other users in the process.
 */
function int8AsNumber(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, 'text', (value: string) => Number(value));
  return types;
}
