import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBlobStoreContract } from '~/server/files/blob-store-contract';
import { DbBlobStore } from '~/server/files/db-blob-store';
import { DirBlobStore } from '~/server/files/dir-blob-store';
import { S3BlobStore } from '~/server/files/s3-blob-store';
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

// S3 through a server that speaks its protocol over HTTP, started here (s3rver, files in a temp dir).
let s3: { url: string; close: () => Promise<void> } | null = null;
beforeAll(async () => {
  const S3rver = (await import('s3rver')).default;
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: tempDir(), configureBuckets: [{ name: 'paddock', configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  s3 = { url: `http://127.0.0.1:${port}`, close: () => server.close() };
});
afterAll(async () => {
  await s3?.close();
});

runBlobStoreContract('S3', () => {
  const blobs = new S3BlobStore({ bucket: 'paddock', endpoint: s3!.url, forcePathStyle: true, prefix: `${randomUUID()}/`, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return Promise.resolve({ blobs, close: () => Promise.resolve(blobs.close()) });
});

runBlobStoreContract('PostgreSQL', async () => {
  const store = await openPostgresStore({ url: pg!.url });
  await store.db.deleteFrom('blob_chunks').execute();
  await store.db.deleteFrom('blobs').execute();
  return { blobs: new DbBlobStore(store.db), close: () => store.close() };
});

describe('the S3 blob store', () => {
  it('streams a file larger than one part as a multipart upload and reads it back whole', async () => {
    const blobs = new S3BlobStore({ bucket: 'paddock', endpoint: s3!.url, forcePathStyle: true, prefix: `${randomUUID()}/`, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    try {
      const bytes = randomBytes(11 * 1024 * 1024);
      const put = await blobs.put(Readable.from([bytes.subarray(0, 6_000_000), bytes.subarray(6_000_000)]), bytes.length);
      await put.commit();
      expect(put.size).toBe(bytes.length);
      expect((await buffer(await blobs.open(put.sha256))).equals(bytes)).toBe(true);
    } finally {
      blobs.close();
    }
  });
});

describe('the data dir blob store', () => {
  it('leaves no temporary file behind after a refused put', async () => {
    const root = path.join(tempDir(), 'blobs');
    const blobs = new DirBlobStore(root);
    await expect(blobs.put(Readable.from([Buffer.alloc(2048)]), 1024)).rejects.toMatchObject({ code: 'too_large' });
    expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });
});
