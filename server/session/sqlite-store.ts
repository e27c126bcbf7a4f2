import 'server-only';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  SqliteDialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
  SqliteDriver,
  type TransactionSettings,
  type UnknownRow,
} from 'kysely';
import { KyselySessionStore } from '~/server/session/kysely-queries';
import { migrateToLatest } from '~/server/session/migrations';
import { InProcessNotifier, type Notifier } from '~/server/session/notifier';
import type { Database } from '~/server/session/schema';

export interface SqliteStoreOptions {
  /** Database file, or ':memory:'. Its directory is created if missing. */
  file: string;
  /** Share one notifier between stores of the same process; by default each store has its own. */
  notifier?: Notifier;
  /** Runs before every write (insert, update, delete, write transaction); throws to refuse it (the data dir watch). */
  beforeWrite?: () => void;
}

/**
 * Opens (creating and migrating if needed) the embedded SQLite session store. Open ONE store per
 * file per process: better-sqlite3 is synchronous, so two connections of one process waiting on
 * each other's write lock would block the event loop for busy_timeout.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteSessionStore> {
  const { file } = options;
  if (file !== ':memory:' && file !== '') ownerOnlyFile(file);
  const sqlite = new BetterSqlite3(file);
  try {
    sqlite.pragma('journal_mode = WAL');
    // FULL: every commit is fsynced, so an acknowledged event survives a power cut.
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
  } catch (e) {
    sqlite.close();
    throw e;
  }
  const { beforeWrite } = options;
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: cachedStatements(sqlite) }, beforeWrite), plugins: beforeWrite ? [new BeforeWritePlugin(beforeWrite)] : [] });
  try {
    await migrateToLatest(db);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return new SqliteSessionStore(db, options.notifier ?? new InProcessNotifier());
}

/** How many prepared statements a store keeps (the distinct SQL a server runs is a few hundred). */
const STATEMENT_CACHE = 500;

/**
 * Kysely's SQLite driver prepares every query anew (SQLite parses and plans it each time): the
 * same SQL, which is most of a turn's queries, gets its statement back instead. A statement that is
 * busy (a stream still reading it) is never handed out twice: that query gets a fresh one.
 */
export function cachedStatements(sqlite: BetterSqlite3.Database, size = STATEMENT_CACHE): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      const hit = cache.get(sql);
      if (hit && !hit.busy) {
        // Most recently used last: the oldest is the one dropped.
        cache.delete(sql);
        cache.set(sql, hit);
        return hit;
      }
      const stmt = sqlite.prepare(sql);
      if (!hit) {
        cache.set(sql, stmt);
        if (cache.size > size) cache.delete(cache.keys().next().value!);
      }
      return stmt;
    },
  };
}

/**
 * The database holds every session and the access rows: readable by the server's user only.
 * Created 0600 before SQLite opens it (SQLite gives its -wal and -shm files the database's mode),
 * and an existing file from an older version is narrowed too.
 */
function ownerOnlyFile(file: string): void {
  // turbopackIgnore: runtime paths, not files to bundle (else Next traces the whole project).
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  closeSync(openSync(/*turbopackIgnore: true*/ file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(/*turbopackIgnore: true*/ f)) chmodSync(/*turbopackIgnore: true*/ f, 0o600);
}

/**
 * The shared Kysely store (kysely-queries.ts) on SQLite: every append batch takes the file's write
 * lock (`begin immediate`), and concurrent appends share one durable commit (see group-commit.ts).
 */
export class SqliteSessionStore extends KyselySessionStore {
  constructor(db: Kysely<Database>, notifier: Notifier) {
    super(db, notifier, {
      appendTransaction: (work) => db.transaction().execute(work),
      // WAL: a read transaction sees one snapshot and never blocks the writer.
      readSnapshot: (work) => db.transaction().setAccessMode('read only').execute(work),
      lockSessionRow: false,
    });
  }
}

/**
 * SQLite's plain `begin` is deferred: a transaction that reads and then writes can fail with
 * SQLITE_BUSY (which busy_timeout does not retry) when another process wrote in between. Write
 * transactions therefore take the write lock up front with `begin immediate`; read-only ones stay
 * deferred so they never block writers (WAL).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly beforeWrite?: () => void,
  ) {
    super(config);
  }
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    if (settings?.accessMode !== 'read only') this.beforeWrite?.();
    await connection.executeQuery(CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin deferred' : 'begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #beforeWrite: (() => void) | undefined;
  constructor(config: SqliteDialectConfig, beforeWrite?: () => void) {
    super(config);
    this.#config = config;
    this.#beforeWrite = beforeWrite;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#beforeWrite);
  }
}

/** Statements that write, outside a write transaction too (which `beginTransaction` checks). */
const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

class BeforeWritePlugin implements KyselyPlugin {
  constructor(private readonly beforeWrite: () => void) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (WRITES.has(args.node.kind)) this.beforeWrite();
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

