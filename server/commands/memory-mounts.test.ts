import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NEVER_LOST } from '~/lib/hand';
import { sessionMounts } from '~/server/commands/session-mounts';
import { DirBlobStore } from '~/server/files/dir-blob-store';
import { FileStore } from '~/server/files/file-store';
import { SessionFileStore } from '~/server/files/session-files';
import { DirMountPoint } from '~/server/hands/dir-mounts';
import { withMounts } from '~/server/hands/hand-mounts';
import { MemoryRepo } from '~/server/memory/memory-repo';
import { memoryResourcesFor } from '~/server/memory/session-memory';
import { SkillStore } from '~/server/skills/skill-store';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

/**
 * A session's memory stores in a hand's mount folder (the folder a sandbox binds at /mnt): placed
 * before each call, and what the agent changed there written back after it as versions by the
 * session, or refused (a conflict, a read-only store) as a tool error, never lost silently.
 */
let dir: string;
let store: SqliteSessionStore;
let memory: MemoryRepo;
let mounts: ReturnType<typeof sessionMounts>;
const API = { type: 'api_actor', api_key_id: 'test' } as const;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-memory-mounts-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  memory = new MemoryRepo(store.db);
  const blobs = new DirBlobStore(path.join(dir, 'blobs'));
  mounts = sessionMounts({
    files: new FileStore(store.db),
    blobs,
    sessionFiles: new SessionFileStore(store.db),
    maxOutputBytes: 1 << 20,
    attachments: { store, memory, skills: new SkillStore(store.db), blobs },
  });
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A session with these stores attached, and one hand's mount folder for it. */
async function session(attach: Array<{ id: string; access: 'read_write' | 'read_only' }>) {
  const stores = new Map((await memory.getStores(attach.map((a) => a.id))).map((s) => [s.id, s]));
  const resources = memoryResourcesFor(attach.map((a) => ({ type: 'memory_store' as const, memory_store_id: a.id, access: a.access })), stores);
  const id = (await store.createSession({ resources })).id;
  const point = new DirMountPoint(path.join(dir, `hand-${id}`, 'mnt'));
  const hand = { id: 'sandbox-1', kind: 'sandbox' as const, lost: NEVER_LOST, tools: () => Promise.resolve([]), execute: () => Promise.resolve(''), close: () => Promise.resolve(), mountPoint: point };
  const file = (p: string) => path.join(point.hostDir, 'memory', p);
  /** One tool call: `during` is what the agent does in the folder. */
  const call = (during: () => void | Promise<void> = () => undefined) => withMounts(mounts, id, 'sandbox-1', hand, async () => during());
  return { id, file, call };
}

describe("a session's memory stores in its hand", () => {
  it('places each store under its folder, and writes what the agent changed, added and deleted back as versions by the session', async () => {
    const notes = await memory.createStore({ name: 'team notes' });
    const kept = await memory.createMemory(notes.id, { path: '/projects/paddock.md', content: 'Uses kysely.' }, API);
    const gone = await memory.createMemory(notes.id, { path: '/old.md', content: 'stale' }, API);
    const s = await session([{ id: notes.id, access: 'read_write' }]);
    await s.call(() => {
      expect(fs.readFileSync(s.file('team-notes/projects/paddock.md'), 'utf8')).toBe('Uses kysely.');
      fs.writeFileSync(s.file('team-notes/projects/paddock.md'), 'Uses kysely and zod.');
      fs.mkdirSync(s.file('team-notes/decisions'));
      fs.writeFileSync(s.file('team-notes/decisions/db.md'), 'PostgreSQL to scale.');
      fs.rmSync(s.file('team-notes/old.md'));
    });
    expect((await memory.getMemory(notes.id, kept.id)).content).toBe('Uses kysely and zod.');
    expect((await memory.memoryAt(notes.id, '/decisions/db.md'))?.content).toBe('PostgreSQL to scale.');
    expect(await memory.memoryAt(notes.id, '/old.md')).toBeNull();
    const bySession = (await memory.listVersions(notes.id, { limit: 20, sessionId: s.id, view: 'basic' })).data;
    expect(bySession.map((v) => v.operation).sort()).toEqual(['created', 'deleted', 'modified']);
    expect(bySession.every((v) => v.created_by.type === 'session_actor')).toBe(true);
    expect(bySession.find((v) => v.operation === 'deleted')?.memory_id).toBe(gone.id);
    // A call that changes nothing writes nothing.
    await s.call();
    expect((await memory.listVersions(notes.id, { limit: 20, sessionId: s.id, view: 'basic' })).data).toHaveLength(3);
  });

  it('refuses a change to a memory another writer changed since the call began, as a tool error, and puts the store’s version back', async () => {
    const notes = await memory.createStore({ name: 'notes' });
    const m = await memory.createMemory(notes.id, { path: '/plan.md', content: 'v1' }, API);
    const s = await session([{ id: notes.id, access: 'read_write' }]);
    await expect(
      s.call(async () => {
        // Another session or a program writes first; this agent then writes over its stale copy.
        await memory.updateMemory(notes.id, m.id, { content: 'v2 from elsewhere' }, API);
        fs.writeFileSync(s.file('notes/plan.md'), 'v2 from this agent');
      }),
    ).rejects.toThrow(/changes to memory were not saved:\n- \/mnt\/memory\/notes\/plan\.md: .*changed|precondition/);
    expect((await memory.getMemory(notes.id, m.id)).content).toBe('v2 from elsewhere');
    // The next call sees what the store holds, not the refused write.
    await s.call(() => expect(fs.readFileSync(s.file('notes/plan.md'), 'utf8')).toBe('v2 from elsewhere'));
  });

  it('refuses writes to a read-only store and outside any store, and never follows a link the agent made', async () => {
    const handbook = await memory.createStore({ name: 'handbook' });
    await memory.createMemory(handbook.id, { path: '/rules.md', content: 'Be kind.' }, API);
    const s = await session([{ id: handbook.id, access: 'read_only' }]);
    const secret = path.join(dir, 'secret.txt');
    fs.writeFileSync(secret, 'host secret');
    const failure = await s
      .call(() => {
        fs.writeFileSync(s.file('handbook/rules.md'), 'Be quick.');
        fs.writeFileSync(s.file('stray.md'), 'where?');
        fs.symlinkSync(secret, s.file('handbook/leak.md'));
      })
      .then(() => new Error('the call did not fail'), (e: unknown) => e as Error);
    expect(failure.message).toMatch(/changes to memory were not saved/);
    expect(failure.message).toMatch(/handbook\/rules\.md: .*read-only/);
    expect(failure.message).toMatch(/stray\.md: not inside a memory store/);
    expect(failure.message).not.toContain('host secret');
    expect((await memory.memoryAt(handbook.id, '/rules.md'))?.content).toBe('Be kind.');
    expect(await memory.memoryAt(handbook.id, '/leak.md')).toBeNull();
    await s.call(() => {
      expect(fs.readFileSync(s.file('handbook/rules.md'), 'utf8')).toBe('Be kind.');
      expect(fs.existsSync(s.file('stray.md'))).toBe(false);
      expect(fs.existsSync(s.file('handbook/leak.md'))).toBe(false);
    });
  });
});
