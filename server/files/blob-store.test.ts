import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBlobStoreContract } from '~/server/files/blob-store-contract';
import { DbBlobStore } from '~/server/files/db-blob-store';
import { DirBlobStore } from '~/server/files/dir-blob-store';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-blobs-'));
  dirs.push(d);
  return d;
};
let pg: TestDatabase | null = null;
beforeAll(async () => {
  pg = await createTestDatabase('paddock_blobs');
});
afterAll(async () => {
  await pg?.drop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

runBlobStoreContract('the data dir', () => Promise.resolve({ blobs: new DirBlobStore(path.join(tempDir(), 'blobs')), close: () => Promise.resolve() }));

runBlobStoreContract('SQLite', async () => {
  const store = await openSqliteStore({ file: path.join(tempDir(), 'db.sqlite') });
  return { blobs: new DbBlobStore(store.db), close: () => store.close() };
});

runBlobStoreContract('PostgreSQL', async () => {
  const store = await openPostgresStore({ url: pg!.url });
  await store.db.deleteFrom('blob_chunks').execute();
  await store.db.deleteFrom('blobs').execute();
  return { blobs: new DbBlobStore(store.db), close: () => store.close() };
});

describe('the data dir blob store', () => {
  it('leaves no temporary file behind after a refused put', async () => {
    const root = path.join(tempDir(), 'blobs');
    const blobs = new DirBlobStore(root);
    await expect(blobs.put(Readable.from([Buffer.alloc(2048)]), 1024)).rejects.toMatchObject({ code: 'too_large' });
    expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });
});
