import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'files-api-key-0123456789';
const MAX_UPLOAD = 64 * 1024;
let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-files-api-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 16 * 1024, maxUploadBytes: MAX_UPLOAD }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The blobs on disk (content-addressed files), temporary ones left out. */
const blobsOnDisk = () =>
  fs.existsSync(path.join(dir, 'blobs'))
    ? fs.readdirSync(path.join(dir, 'blobs'), { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && !d.parentPath.endsWith('tmp')).map((d) => d.name)
    : [];
const tempsOnDisk = () => (fs.existsSync(path.join(dir, 'blobs', 'tmp')) ? fs.readdirSync(path.join(dir, 'blobs', 'tmp')) : []);

describe('the Files API through the official SDK', () => {
  it('uploads a file larger than the JSON body cap, lists, retrieves, downloads it byte for byte and deletes it', async () => {
    const bytes = randomBytes(40 * 1024);
    const made = await client.beta.files.upload({ file: await toFile(bytes, 'data.bin', { type: 'application/octet-stream' }) });
    expect(made).toMatchObject({ type: 'file', filename: 'data.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length, downloadable: true, expires_at: null });
    expect(made.id).toMatch(/^file_[0-9A-Z]{26}$/);
    expect(blobsOnDisk()).toEqual([createHash('sha256').update(bytes).digest('hex')]);

    expect(await client.beta.files.retrieveMetadata(made.id)).toEqual(made);
    const listed = [];
    for await (const f of client.beta.files.list()) listed.push(f.id);
    expect(listed).toEqual([made.id]);

    const res = await client.beta.files.download(made.id);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);

    expect(await client.beta.files.delete(made.id)).toEqual({ id: made.id, type: 'file_deleted' });
    await expect(client.beta.files.retrieveMetadata(made.id)).rejects.toMatchObject({ status: 404 });
    expect(blobsOnDisk()).toEqual([]);
  });

  it('reaches the same paths through the non-beta client.files, with no beta header', async () => {
    const made = await client.files.upload({ file: await toFile(Buffer.from('hello'), 'a.txt', { type: 'text/plain' }) });
    expect(await client.files.retrieveMetadata(made.id)).toMatchObject({ id: made.id, filename: 'a.txt', size_bytes: 5 });
    expect(await (await client.files.download(made.id)).text()).toBe('hello');
    expect((await client.files.list()).data.map((f) => f.id)).toEqual([made.id]);
    expect(await client.files.delete(made.id)).toMatchObject({ id: made.id });
  });

  it('stores the same bytes once and frees them only when the last file with them goes', async () => {
    const a = await client.beta.files.upload({ file: await toFile(Buffer.from('same'), 'a.txt', { type: 'text/plain' }) });
    const b = await client.beta.files.upload({ file: await toFile(Buffer.from('same'), 'b.txt', { type: 'text/plain' }) });
    expect(blobsOnDisk()).toHaveLength(1);
    await client.beta.files.delete(a.id);
    expect(blobsOnDisk()).toHaveLength(1);
    expect(await (await client.beta.files.download(b.id)).text()).toBe('same');
    await client.beta.files.delete(b.id);
    expect(blobsOnDisk()).toEqual([]);
  });

  it('lists newest first, by ids, page by page', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await client.beta.files.upload({ file: await toFile(Buffer.from(`f${n}`), `f${n}.txt`, { type: 'text/plain' }) })).id);
    const first = await client.beta.files.list({ limit: 2 });
    expect(first.data.map((f) => f.id)).toEqual([ids[2], ids[1]]);
    const all = [];
    for await (const f of client.beta.files.list({ limit: 2 })) all.push(f.id);
    expect(all).toEqual([...ids].reverse());
    expect((await client.beta.files.list({ ids: [ids[0]!] })).data.map((f) => f.id)).toEqual([ids[0]]);
  });

  it('keeps an expiring file until its time, and refuses an expiry that is not a sensible number of seconds', async () => {
    const made = await client.beta.files.upload({ file: await toFile(Buffer.from('soon'), 's.txt', { type: 'text/plain' }), expires_in_seconds: 3600 });
    expect(Date.parse(made.expires_at!) - Date.now()).toBeGreaterThan(3500_000);
    await expect(client.beta.files.upload({ file: await toFile(Buffer.from('x'), 'x.txt'), expires_in_seconds: 5 })).rejects.toThrow(/400.*expires_in_seconds/);
    expect(tempsOnDisk()).toEqual([]);
  });

  it('refuses an upload over PADDOCK_MAX_UPLOAD_BYTES with 413, leaving no bytes and no file behind', async () => {
    await expect(client.beta.files.upload({ file: await toFile(randomBytes(MAX_UPLOAD + 1), 'big.bin') })).rejects.toMatchObject({ status: 413 });
    expect(blobsOnDisk()).toEqual([]);
    expect(tempsOnDisk()).toEqual([]);
    expect((await client.beta.files.list()).data).toEqual([]);
  });

  it.each([
    ['a JSON body', { 'content-type': 'application/json' }, '{"file":"x"}', /multipart\/form-data/],
    ['a form without a file part', { 'content-type': 'multipart/form-data; boundary=b' }, '--b\r\ncontent-disposition: form-data; name="note"\r\n\r\nhi\r\n--b--\r\n', /no `file` part/],
    ['a file under another name', { 'content-type': 'multipart/form-data; boundary=b' }, '--b\r\ncontent-disposition: form-data; name="upload"; filename="a"\r\n\r\nhi\r\n--b--\r\n', /unknown part "upload"/],
  ])('answers %s with a 400 naming what is wrong', async (_what, headers, body, message) => {
    const res = await fetch(`${server.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': KEY, ...headers }, body });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(blobsOnDisk()).toEqual([]);
  });

  it('answers an unknown or malformed file id with 404 or 400, naming it', async () => {
    await expect(client.beta.files.retrieveMetadata('file_01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.files.download('nope')).rejects.toMatchObject({ status: 400 });
  });

  it('refuses an upload without an API key before reading it', async () => {
    const res = await fetch(`${server.url}/v1/files`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: 'x' });
    expect(res.status).toBe(401);
  });
});

describe('the Files API on an S3 byte store (PADDOCK_BLOB_STORE=s3)', () => {
  it('uploads to the bucket and downloads from it, through the SDK', async () => {
    const S3rver = (await import('s3rver')).default;
    const s3dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-s3rver-'));
    const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: 'paddock-files', configs: [] }] });
    const { port } = (await s3.run()) as { port: number };
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
    const s3dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-files-s3-'));
    const store = await openSqliteStore({ file: path.join(s3dataDir, 'db.sqlite') });
    const s3rt = testRuntime({
      store,
      model: createDemoBrain(),
      dataDir: s3dataDir,
      env: { PADDOCK_API_KEY: KEY, PADDOCK_BLOB_STORE: 's3', PADDOCK_S3_BUCKET: 'paddock-files', PADDOCK_S3_ENDPOINT: `http://127.0.0.1:${port}`, PADDOCK_S3_FORCE_PATH_STYLE: '1' },
    });
    const s3server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(s3rt), maxBodyBytes: 16 * 1024 }));
    try {
      const c = new Anthropic({ apiKey: KEY, baseURL: s3server.url, maxRetries: 0 });
      const bytes = randomBytes(100 * 1024);
      const made = await c.beta.files.upload({ file: await toFile(bytes, 'in-s3.bin') });
      expect(Buffer.from(await (await c.beta.files.download(made.id)).arrayBuffer()).equals(bytes)).toBe(true);
      // The bytes are in the bucket, not the data dir.
      expect(fs.existsSync(path.join(s3dataDir, 'blobs'))).toBe(false);
      expect(fs.readdirSync(s3dir, { recursive: true }).some((f) => String(f).includes(createHash('sha256').update(bytes).digest('hex')))).toBe(true);
      await c.beta.files.delete(made.id);
      expect(fs.readdirSync(s3dir, { recursive: true }).some((f) => String(f).includes(createHash('sha256').update(bytes).digest('hex')))).toBe(false);
    } finally {
      await s3server.close();
      await s3rt.harness.close();
      await store.close();
      await s3.close();
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: saved.id ?? '', AWS_SECRET_ACCESS_KEY: saved.secret ?? '' });
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      fs.rmSync(s3dir, { recursive: true, force: true });
      fs.rmSync(s3dataDir, { recursive: true, force: true });
    }
  });
});
