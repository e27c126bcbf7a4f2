import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { keysetWalk, newestFirst, pageOf, whereTimeRange } from '~/server/session/keyset-page';

interface Db {
  rows: { id: string; created_at: string; n: number };
}

const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
afterAll(() => db.destroy());

async function seed() {
  await db.schema.createTable('rows').ifNotExists().addColumn('id', 'text', (c) => c.primaryKey()).addColumn('created_at', 'text').addColumn('n', 'integer').execute();
  await db.deleteFrom('rows').execute();
  // Three rows share a time: only the id tells them apart, which is what the walk's tie-break is for.
  const times = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'];
  await db.insertInto('rows').values(times.map((t, i) => ({ id: `row_0${i}`, created_at: t, n: i }))).execute();
}

describe('keyset pages', () => {
  it('walks newest first through ties on the key without repeating or skipping a row', async () => {
    await seed();
    const seen: string[] = [];
    let page: string | null = null;
    do {
      const p: { data: { id: string }[]; next_page: string | null } = await newestFirst(db.selectFrom('rows').selectAll(), 'rows', page, 2);
      seen.push(...p.data.map((r) => r.id));
      page = p.next_page;
    } while (page !== null);
    expect(seen).toEqual(['row_04', 'row_03', 'row_02', 'row_01', 'row_00']);
  });

  it('walks an integer key upwards with no tie-break column', async () => {
    await seed();
    const rows = await keysetWalk(db.selectFrom('rows').select(['id', 'n']), { key: 'n', walk: 'asc', after: { key: 1 }, limit: 2 }).execute();
    expect(rows.map((r) => r.n)).toEqual([2, 3, 4]);
    expect(pageOf(rows, 2, (last) => String(last.n))).toEqual({ data: rows.slice(0, 2), next_page: '3' });
  });

  it('gives no next page when the walk returns no extra row', () => {
    expect(pageOf([{ id: 'a' }], 2, (last) => last.id)).toEqual({ data: [{ id: 'a' }], next_page: null });
  });

  it('bounds a list by created_at and refuses a bound that is not a time, naming it', async () => {
    await seed();
    const q = whereTimeRange(db.selectFrom('rows').select('id'), 'created_at', 'createdAt', { gt: '2026-01-01T00:00:00Z', lt: '2026-01-03T00:00:00Z' });
    expect((await q.execute()).map((r) => r.id).sort()).toEqual(['row_01', 'row_02', 'row_03']);
    expect(() => whereTimeRange(db.selectFrom('rows').select('id'), 'created_at', 'createdAt', { gte: 'yesterday' })).toThrow(/createdAt\.gte/);
  });
});
