import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

const KEY = 'memory-api-key-0123456789';
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

let pg: TestDatabase | null = null;
beforeAll(async () => {
  pg = await createTestDatabase('paddock_memory_api');
});
afterAll(async () => {
  await pg?.drop();
});

/** Each database its own run of the suite: SQLite in a temp dir, PostgreSQL emptied of memory rows. */
const BACKENDS: Array<[string, () => Promise<SessionStore>]> = [
  ['SQLite', () => openSqliteStore({ file: path.join(dir, 'db.sqlite') })],
  [
    'PostgreSQL',
    async () => {
      const s = await openPostgresStore({ url: pg!.url });
      for (const t of ['memory_versions', 'memories', 'memory_stores'] as const) await s.db.deleteFrom(t).execute();
      return s;
    },
  ],
];

async function start(open: () => Promise<SessionStore>): Promise<void> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-memory-api-'));
  const store = await open();
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
}

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(BACKENDS)('memory stores through the official SDK on %s', (_name, open) => {
  beforeEach(() => start(open));

  it('creates, retrieves, updates, lists, archives and deletes a store', async () => {
    const s = await client.beta.memoryStores.create({ name: 'team notes', description: 'what we learned', metadata: { team: 'a' } });
    expect(s).toMatchObject({ type: 'memory_store', name: 'team notes', description: 'what we learned', metadata: { team: 'a' }, archived_at: null });
    expect(s.id).toMatch(/^memstore_[0-9A-Z]{26}$/);
    expect(await client.beta.memoryStores.retrieve(s.id)).toEqual(s);
    const u = await client.beta.memoryStores.update(s.id, { description: 'renamed', metadata: { team: null, owner: 'b' } });
    expect(u).toMatchObject({ description: 'renamed', metadata: { owner: 'b' } });
    const listed = [];
    for await (const x of client.beta.memoryStores.list()) listed.push(x.id);
    expect(listed).toEqual([s.id]);
    expect((await client.beta.memoryStores.archive(s.id)).archived_at).not.toBeNull();
    const live = [];
    for await (const x of client.beta.memoryStores.list()) live.push(x.id);
    expect(live).toEqual([]);
    const all = [];
    for await (const x of client.beta.memoryStores.list({ include_archived: true })) all.push(x.id);
    expect(all).toEqual([s.id]);
    expect(await client.beta.memoryStores.delete(s.id)).toEqual({ id: s.id, type: 'memory_store_deleted' });
    await expect(client.beta.memoryStores.retrieve(s.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('writes memories by path, lists them by prefix and depth, and keeps every change as a version naming the API key', async () => {
    const s = await client.beta.memoryStores.create({ name: 'mem' });
    const a = await client.beta.memoryStores.memories.create(s.id, { path: '/notes/a.md', content: 'alpha' });
    expect(a).toMatchObject({ type: 'memory', path: '/notes/a.md', content_sha256: sha('alpha'), content_size_bytes: 5, memory_store_id: s.id });
    expect(a.content).toBeUndefined();
    await client.beta.memoryStores.memories.create(s.id, { path: '/notes/deep/b.md', content: 'beta' });
    expect((await client.beta.memoryStores.memories.retrieve(a.id, { memory_store_id: s.id })).content).toBe('alpha');

    const top = [];
    for await (const i of client.beta.memoryStores.memories.list(s.id, { path_prefix: '/notes/', depth: 1 })) top.push([i.type, i.path]);
    expect(top).toEqual([
      ['memory', '/notes/a.md'],
      ['memory_prefix', '/notes/deep/'],
    ]);

    const u = await client.beta.memoryStores.memories.update(a.id, { memory_store_id: s.id, content: 'alpha 2', precondition: { type: 'content_sha256', content_sha256: sha('alpha') }, view: 'full' });
    expect(u).toMatchObject({ content: 'alpha 2', content_sha256: sha('alpha 2') });
    expect(await client.beta.memoryStores.memories.delete(a.id, { memory_store_id: s.id, expected_content_sha256: sha('alpha 2') })).toEqual({ id: a.id, type: 'memory_deleted' });

    const versions = [];
    for await (const v of client.beta.memoryStores.memoryVersions.list(s.id, { memory_id: a.id })) versions.push(v);
    expect(versions.map((v) => v.operation)).toEqual(['deleted', 'modified', 'created']);
    expect(versions.every((v) => v.created_by?.type === 'api_actor')).toBe(true);
    const created = versions[2]!;
    expect((await client.beta.memoryStores.memoryVersions.retrieve(created.id, { memory_store_id: s.id })).content).toBe('alpha');
    const redacted = await client.beta.memoryStores.memoryVersions.redact(created.id, { memory_store_id: s.id });
    expect(redacted).toMatchObject({ content: null, path: null, content_sha256: null });
    expect(redacted.redacted_at).not.toBeNull();
  });

  it("surfaces a stale precondition as the SDK's ConflictError with type memory_precondition_failed_error, changing nothing", async () => {
    const s = await client.beta.memoryStores.create({ name: 'race' });
    const m = await client.beta.memoryStores.memories.create(s.id, { path: '/x', content: 'one' });
    await client.beta.memoryStores.memories.update(m.id, { memory_store_id: s.id, content: 'two' });
    const err = await client.beta.memoryStores.memories.update(m.id, { memory_store_id: s.id, content: 'three', precondition: { type: 'content_sha256', content_sha256: sha('one') } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.ConflictError);
    expect((err as InstanceType<typeof Anthropic.ConflictError>).status).toBe(409);
    expect((err as InstanceType<typeof Anthropic.ConflictError>).error).toMatchObject({ type: 'error', error: { type: 'memory_precondition_failed_error' } });
    const del = await client.beta.memoryStores.memories.delete(m.id, { memory_store_id: s.id, expected_content_sha256: sha('one') }).catch((e: unknown) => e);
    expect(del).toBeInstanceOf(Anthropic.ConflictError);
    await expect(client.beta.memoryStores.memories.delete(m.id, { memory_store_id: s.id, expected_content_sha256: 'ABC' })).rejects.toThrow(/expected_content_sha256: must be 64 lowercase hexadecimal/);
    expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: s.id })).content).toBe('two');
  });

  it('answers a taken path with memory_path_conflict_error naming the memory that holds it', async () => {
    const s = await client.beta.memoryStores.create({ name: 'paths' });
    const m = await client.beta.memoryStores.memories.create(s.id, { path: '/a.md', content: '' });
    const err = (await client.beta.memoryStores.memories.create(s.id, { path: '/a.md', content: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.ConflictError>;
    expect(err).toBeInstanceOf(Anthropic.ConflictError);
    expect(err.error).toMatchObject({ error: { type: 'memory_path_conflict_error', conflicting_memory_id: m.id, conflicting_path: '/a.md' } });
  });

  it('refuses a path with .., NUL or no leading slash with a 400 naming the path, writing nothing', async () => {
    const s = await client.beta.memoryStores.create({ name: 'bad' });
    for (const p of ['/a/../../etc/passwd', '/a\0b', 'relative/path', '/a//b']) {
      const err = (await client.beta.memoryStores.memories.create(s.id, { path: p, content: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
      expect(err, p).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.message).toMatch(/path/);
    }
    const listed = [];
    for await (const i of client.beta.memoryStores.memories.list(s.id)) listed.push(i);
    expect(listed).toEqual([]);
    const v = [];
    for await (const i of client.beta.memoryStores.memoryVersions.list(s.id)) v.push(i);
    expect(v).toEqual([]);
  });

  it('answers an unknown store or memory 404 naming it', async () => {
    await expect(client.beta.memoryStores.retrieve('memstore_01JZZZZZZZZZZZZZZZZZZZZZZZ')).rejects.toThrow(/memory store memstore_01JZZZZZZZZZZZZZZZZZZZZZZZ not found/);
    const s = await client.beta.memoryStores.create({ name: 'x' });
    await expect(client.beta.memoryStores.memories.retrieve('mem_01JZZZZZZZZZZZZZZZZZZZZZZZ', { memory_store_id: s.id })).rejects.toThrow(/memory mem_01JZZZZZZZZZZZZZZZZZZZZZZZ not found/);
  });
});
