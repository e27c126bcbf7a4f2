import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cachedStatements } from '~/server/session/sqlite-store';

describe("the SQLite store's prepared statements", () => {
  it('hands the same statement back for the same SQL, and a fresh one while it is busy', () => {
    const sqlite = new BetterSqlite3(':memory:');
    const db = cachedStatements(sqlite);
    sqlite.exec('create table t (n integer); insert into t values (1), (2), (3)');
    const sql = 'select n from t order by n';
    const first = db.prepare(sql) as unknown as BetterSqlite3.Statement;
    expect(db.prepare(sql)).toBe(first);
    // A stream still reading it: the same SQL run meanwhile gets its own statement.
    const reading = first.iterate();
    reading.next();
    const meanwhile = db.prepare(sql) as unknown as BetterSqlite3.Statement;
    expect(meanwhile).not.toBe(first);
    expect(meanwhile.all()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    reading.return?.();
    expect(db.prepare(sql)).toBe(first);
    db.close();
  });

  it('keeps at most its size, dropping the least recently used', () => {
    const sqlite = new BetterSqlite3(':memory:');
    const db = cachedStatements(sqlite, 2);
    const one = db.prepare('select 1');
    const two = db.prepare('select 2');
    expect(db.prepare('select 1')).toBe(one); // used again: now the most recent
    const three = db.prepare('select 3'); // drops select 2, the least recent
    expect(db.prepare('select 1')).toBe(one);
    expect(db.prepare('select 3')).toBe(three);
    expect(db.prepare('select 2')).not.toBe(two);
    db.close();
  });
});
