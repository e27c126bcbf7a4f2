import 'server-only';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { StoreUnavailableError, isStoreUnavailable } from '~/lib/errors';

/**
 * Which PostgreSQL failures mean "the database is not reachable right now" (restart, failover,
 * network), as opposed to a bad query: those become StoreUnavailableError, which the harness and
 * followers retry and the API reports as SERVICE_UNAVAILABLE.
 */

/** Socket-level errno codes of a refused, reset or unroutable connection. */
const NETWORK_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** admin_shutdown, crash_shutdown, cannot_connect_now (starting up / shutting down). */
const SHUTDOWN_SQLSTATE = new Set(['57P01', '57P02', '57P03']);

/** node-postgres and pg-pool report a lost or unobtainable connection with these messages only. */
const LOST_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
];

export function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = 'code' in e && typeof e.code === 'string' ? e.code : null;
  if (code && (NETWORK_ERRNO.has(code) || SHUTDOWN_SQLSTATE.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (LOST_MESSAGES.some((m) => m.test(e.message))) return true;
  // Node's happy-eyeballs connect reports every address it tried.
  if (e instanceof AggregateError) return e.errors.some(isConnectionError);
  return false;
}

/** A connection-level error as StoreUnavailableError; anything else unchanged. */
export function toStoreError(e: unknown): unknown {
  if (isStoreUnavailable(e) || !isConnectionError(e)) return e;
  const err = e as Error & { code?: unknown };
  const detail = typeof err.code === 'string' ? `${err.code} ${err.message}` : err.message;
  return new StoreUnavailableError('PostgreSQL', detail, { cause: e });
}

/**
 * The pool as Kysely sees it, with every connect and query error passed through toStoreError:
 * one place covers every statement the store runs (transactions' begin/commit/rollback included).
 */
export function storeErrorsPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, GuardedClient>();
  return {
    options: pool.options,
    async connect() {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw toStoreError(e);
      }
      // Kysely keys its connection objects by client: hand it the same wrapper every time.
      let guarded = clients.get(client);
      if (!guarded) {
        guarded = new GuardedClient(client);
        clients.set(client, guarded);
      }
      return guarded;
    },
    end: () => pool.end(),
  };
}

class GuardedClient implements PostgresPoolClient {
  constructor(private readonly client: pg.PoolClient) {}

  get processID(): number | undefined {
    return (this.client as pg.PoolClient & { processID?: number }).processID;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(query: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // A cursor (streamed query) passes through unguarded: the store configures none.
    if (typeof query !== 'string') return this.client.query(query as never);
    return this.client.query(query, parameters ? [...parameters] : []).catch((e: unknown) => {
      throw toStoreError(e);
    }) as Promise<PostgresQueryResult<R>>;
  }

  release(destroy?: boolean): void {
    // pg-pool replaces release() on every checkout: always call the current one.
    this.client.release(destroy);
  }
}
