import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A throwaway PostgreSQL database for one test file, created through the admin database and
 * dropped at the end. Without a reachable server it throws (tests fail, never skip silently).
 */
export const ADMIN_URL = process.env.PADDOCK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (e) {
    const where = new URL(ADMIN_URL);
    where.password = '';
    throw new Error(
      `PostgreSQL is not reachable at ${where.toString()} (${e instanceof Error ? e.message : String(e)}). ` +
        'Start it with `bash scripts/ensure-postgres.sh`, or point PADDOCK_TEST_DATABASE_URL at a server.',
      { cause: e },
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  await withAdmin((c) => c.query(`create database ${c.escapeIdentifier(name)}`));
  return {
    name,
    url: u.toString(),
    drop: () => withAdmin((c) => c.query(`drop database if exists ${c.escapeIdentifier(name)} with (force)`)).then(() => undefined),
  };
}
