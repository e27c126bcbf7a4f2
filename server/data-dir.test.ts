import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareDataDir } from '~/server/data-dir';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('data directory', () => {
  it('is created 0700 and narrowed to 0700 when an older version left it 0755', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-'));
    const fresh = path.join(dir, 'fresh', '.paddock');
    prepareDataDir(fresh);
    expect(mode(fresh)).toBe(0o700);
    const old = path.join(dir, 'old');
    fs.mkdirSync(old, { mode: 0o755 });
    fs.chmodSync(old, 0o755);
    prepareDataDir(old);
    expect(mode(old)).toBe(0o700);
  });

  it('keeps the SQLite database and its WAL files 0600, also one an older version made 0644', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-'));
    const file = path.join(dir, 'paddock.sqlite');
    let store = await openSqliteStore({ file });
    await store.createSession({});
    for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(mode(f), f).toBe(0o600);
    await store.close();
    fs.chmodSync(file, 0o644);
    store = await openSqliteStore({ file });
    expect(mode(file)).toBe(0o600);
    await store.close();
  });
});
