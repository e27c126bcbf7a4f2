import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MemoryRepo as Repo, MemoryRepo, sha256Hex } from '~/server/memory/memory-repo';
import type { Actor } from '~/server/memory/memory-types';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

const KEY: Actor = { type: 'api_actor', api_key_id: 'apik_test' };
const SESSION: Actor = { type: 'session_actor', session_id: 'sesn_01JTEST00000000000000000000' };
const dirs: string[] = [];
let pg: TestDatabase | null = null;
beforeAll(async () => {
  pg = await createTestDatabase('paddock_memory');
});
afterAll(async () => {
  await pg?.drop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const backends: Array<[string, () => Promise<{ repo: Repo; close(): Promise<void> }>]> = [
  [
    'SQLite',
    async () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-memory-'));
      dirs.push(d);
      const store = await openSqliteStore({ file: path.join(d, 'db.sqlite') });
      return { repo: new MemoryRepo(store.db), close: () => store.close() };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const store = await openPostgresStore({ url: pg!.url });
      return { repo: new MemoryRepo(store.db), close: () => store.close() };
    },
  ],
];

describe.each(backends)('memory stores on %s', (_name, open) => {
  let repo: Repo;
  let close: (() => Promise<void>) | null = null;
  const fresh = async () => {
    const s = await open();
    close = () => s.close();
    repo = s.repo;
    return repo.createStore({ name: `notes ${Math.random()}`, description: 'what we learned', metadata: { team: 'a' } });
  };
  afterEach(async () => {
    await close?.();
    close = null;
  });

  it('creates, updates (metadata patch), lists, archives and deletes a store with its memories and versions', async () => {
    const s = await fresh();
    expect(s).toMatchObject({ type: 'memory_store', description: 'what we learned', metadata: { team: 'a' }, archived_at: null });
    expect(s.id).toMatch(/^memstore_/);
    const u = await repo.updateStore(s.id, { description: 'new', metadata: { team: null, owner: 'b' } });
    expect(u).toMatchObject({ description: 'new', metadata: { owner: 'b' } });
    expect((await repo.listStores({ limit: 100, includeArchived: false })).data.map((x) => x.id)).toContain(s.id);
    await repo.createMemory(s.id, { path: '/a.md', content: 'x' }, KEY);
    const a = await repo.archiveStore(s.id);
    expect(a.archived_at).not.toBeNull();
    expect((await repo.listStores({ limit: 100, includeArchived: false })).data.map((x) => x.id)).not.toContain(s.id);
    await expect(repo.createMemory(s.id, { path: '/b.md', content: 'y' }, KEY)).rejects.toMatchObject({ code: 'conflict' });
    expect(await repo.deleteStore(s.id)).toEqual({ id: s.id, type: 'memory_store_deleted' });
    await expect(repo.getStore(s.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(repo.listVersions(s.id, { view: 'basic', limit: 10 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps every change to a memory as a version naming who made it, content and hash included', async () => {
    const s = await fresh();
    const m = await repo.createMemory(s.id, { path: '/notes/todo.md', content: 'one' }, KEY);
    expect(m).toMatchObject({ type: 'memory', path: '/notes/todo.md', content_sha256: sha256Hex('one'), content_size_bytes: 3 });
    expect(m.content).toBeUndefined();
    const u = await repo.updateMemory(s.id, m.id, { content: 'two ✓', expectedSha256: sha256Hex('one') }, SESSION);
    expect(u.content_size_bytes).toBe(Buffer.byteLength('two ✓'));
    expect((await repo.getMemory(s.id, m.id)).content).toBe('two ✓');
    await repo.deleteMemory(s.id, m.id, sha256Hex('two ✓'), KEY);
    await expect(repo.getMemory(s.id, m.id)).rejects.toMatchObject({ code: 'not_found' });
    const versions = (await repo.listVersions(s.id, { view: 'full', limit: 10 })).data;
    expect(versions.map((v) => [v.operation, v.created_by, v.content])).toEqual([
      ['deleted', KEY, null],
      ['modified', SESSION, 'two ✓'],
      ['created', KEY, 'one'],
    ]);
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10, sessionId: SESSION.session_id })).data.map((v) => v.id)).toEqual([versions[1]!.id]);
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10, apiKeyId: 'apik_test', operation: 'created' })).data.map((v) => v.id)).toEqual([versions[2]!.id]);
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10, memoryId: 'mem_other' })).data).toEqual([]);
  });

  it('refuses an update or delete whose content_sha256 is stale, changing nothing', async () => {
    const s = await fresh();
    const m = await repo.createMemory(s.id, { path: '/a', content: 'v1' }, KEY);
    await repo.updateMemory(s.id, m.id, { content: 'v2' }, KEY);
    await expect(repo.updateMemory(s.id, m.id, { content: 'v3', expectedSha256: sha256Hex('v1') }, KEY)).rejects.toMatchObject({ apiType: 'memory_precondition_failed_error', code: 'conflict' });
    await expect(repo.deleteMemory(s.id, m.id, sha256Hex('v1'), KEY)).rejects.toMatchObject({ apiType: 'memory_precondition_failed_error' });
    expect((await repo.getMemory(s.id, m.id)).content).toBe('v2');
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10 })).data).toHaveLength(2);
  });

  it('lets only one of two racing writers with the same precondition win', async () => {
    const s = await fresh();
    const m = await repo.createMemory(s.id, { path: '/race', content: 'base' }, KEY);
    const results = await Promise.allSettled(['left', 'right'].map((c) => repo.updateMemory(s.id, m.id, { content: c, expectedSha256: sha256Hex('base') }, SESSION)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r).reason as { apiType?: string })[0]?.apiType).toBe('memory_precondition_failed_error');
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10 })).data).toHaveLength(2);
  });

  it('refuses a taken path, and a path that would make a memory a directory or a directory a memory, naming the conflicting memory', async () => {
    const s = await fresh();
    const a = await repo.createMemory(s.id, { path: '/a/b.md', content: '' }, KEY);
    await expect(repo.createMemory(s.id, { path: '/a/b.md', content: 'x' }, KEY)).rejects.toMatchObject({ apiType: 'memory_path_conflict_error', fields: { conflicting_memory_id: a.id, conflicting_path: '/a/b.md' } });
    await expect(repo.createMemory(s.id, { path: '/a', content: 'x' }, KEY)).rejects.toMatchObject({ apiType: 'memory_path_conflict_error', fields: { conflicting_memory_id: a.id } });
    await expect(repo.createMemory(s.id, { path: '/a/b.md/c', content: 'x' }, KEY)).rejects.toMatchObject({ apiType: 'memory_path_conflict_error' });
    const other = await repo.createMemory(s.id, { path: '/c.md', content: 'c' }, KEY);
    await expect(repo.updateMemory(s.id, other.id, { path: '/a/b.md' }, KEY)).rejects.toMatchObject({ apiType: 'memory_path_conflict_error' });
    const moved = await repo.updateMemory(s.id, other.id, { path: '/d/c.md' }, KEY);
    expect(moved.path).toBe('/d/c.md');
  });

  it('lists by path prefix, rolling deeper memories up into prefixes at a depth, and pages without repeats', async () => {
    const s = await fresh();
    for (const p of ['/notes/a.md', '/notes/deep/x.md', '/notes/deep/y/z.md', '/notes/b.md', '/other.md', '/Notes/c.md']) await repo.createMemory(s.id, { path: p, content: p }, KEY);
    const all = await repo.listMemories(s.id, { view: 'basic', limit: 100 });
    expect(all.data.map((i) => i.path)).toEqual(['/Notes/c.md', '/notes/a.md', '/notes/b.md', '/notes/deep/x.md', '/notes/deep/y/z.md', '/other.md']);
    const top = await repo.listMemories(s.id, { pathPrefix: '/notes/', depth: 1, view: 'basic', limit: 100 });
    expect(top.data.map((i) => [i.type, i.path])).toEqual([
      ['memory', '/notes/a.md'],
      ['memory', '/notes/b.md'],
      ['memory_prefix', '/notes/deep/'],
    ]);
    const paged: string[] = [];
    let page: string | undefined;
    do {
      const r = await repo.listMemories(s.id, { depth: 2, view: 'full', limit: 2, page });
      paged.push(...r.data.map((i) => i.path));
      page = r.next_page ?? undefined;
    } while (page);
    expect(paged).toEqual(['/Notes/c.md', '/notes/a.md', '/notes/b.md', '/notes/deep/', '/other.md']);
  });

  it('redacts a past version (content, path and hash gone, who and when kept) but not the current one', async () => {
    const s = await fresh();
    const m = await repo.createMemory(s.id, { path: '/secret', content: 'password=hunter2' }, KEY);
    await expect(repo.redactVersion(s.id, m.memory_version_id, KEY)).rejects.toMatchObject({ code: 'conflict' });
    await repo.updateMemory(s.id, m.id, { content: 'nothing here' }, KEY);
    const r = await repo.redactVersion(s.id, m.memory_version_id, SESSION);
    expect(r).toMatchObject({ content: null, path: null, content_sha256: null, content_size_bytes: null, created_by: KEY, redacted_by: SESSION });
    expect(r.redacted_at).not.toBeNull();
    expect(JSON.stringify(await repo.listVersions(s.id, { view: 'full', limit: 10 }))).not.toContain('hunter2');
    await expect(repo.redactVersion(s.id, 'memver_01JNOPE0000000000000000000', KEY)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses content over 100 kB or with NUL, writing nothing', async () => {
    const s = await fresh();
    await expect(repo.createMemory(s.id, { path: '/big', content: 'x'.repeat(102_401) }, KEY)).rejects.toMatchObject({ code: 'too_large' });
    await expect(repo.createMemory(s.id, { path: '/nul', content: 'a\0b' }, KEY)).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await repo.listMemories(s.id, { view: 'basic', limit: 10 })).data).toEqual([]);
    expect((await repo.listVersions(s.id, { view: 'basic', limit: 10 })).data).toEqual([]);
  });
});
