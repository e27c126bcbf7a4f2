import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFromSession } from '~/server/commands/memory-mount-writes';
import { sha256Hex } from '~/server/memory/memory-repo';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { createSessionFor } from '~/server/agents/new-session';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
let rt: Runtime;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mount-writes-'));
  rt = testRuntime({ store: await openSqliteStore({ file: path.join(dir, 'db.sqlite') }), model: createDemoBrain(), dataDir: dir });
  await rt.agents.ensureDefaults();
});

afterEach(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sessionWith = async (storeId: string, access: 'read_write' | 'read_only') => (await createSessionFor(rt, { agent: 'agent_default', resources: [{ type: 'memory_store', memory_store_id: storeId, access }] })).session.id;

describe('a session writing to its mounted memory store', () => {
  it('makes versions by the session, and of two sessions that read the same memory the later write is a conflict, not a lost update', async () => {
    const store = await rt.memory.createStore({ name: 'shared' });
    await rt.memory.createMemory(store.id, { path: '/todo.md', content: 'one' }, { type: 'api_actor', api_key_id: 'k' });
    const a = await sessionWith(store.id, 'read_write');
    const b = await sessionWith(store.id, 'read_write');
    const read = sha256Hex('one');

    const first = await writeFromSession(rt, a, store.id, { path: '/todo.md', content: 'one, two', readSha256: read });
    expect(first).toMatchObject({ content_sha256: sha256Hex('one, two') });
    await expect(writeFromSession(rt, b, store.id, { path: '/todo.md', content: 'one, three', readSha256: read })).rejects.toMatchObject({ apiType: 'memory_precondition_failed_error' });
    await writeFromSession(rt, b, store.id, { path: '/new.md', content: 'from b', readSha256: null });
    await expect(writeFromSession(rt, a, store.id, { path: '/new.md', content: 'from a', readSha256: null })).rejects.toMatchObject({ apiType: 'memory_path_conflict_error' });

    const versions = (await rt.memory.listVersions(store.id, { view: 'basic', limit: 10 })).data;
    expect(versions.map((v) => [v.operation, v.path, v.created_by])).toEqual([
      ['created', '/new.md', { type: 'session_actor', session_id: b }],
      ['modified', '/todo.md', { type: 'session_actor', session_id: a }],
      ['created', '/todo.md', { type: 'api_actor', api_key_id: 'k' }],
    ]);
    expect((await rt.memory.memoryAt(store.id, '/todo.md'))?.content).toBe('one, two');
  });

  it('refuses a read-only mount, a store the session does not have, and a path with ..', async () => {
    const store = await rt.memory.createStore({ name: 'ro' });
    const other = await rt.memory.createStore({ name: 'other' });
    const s = await sessionWith(store.id, 'read_only');
    await expect(writeFromSession(rt, s, store.id, { path: '/a', content: 'x', readSha256: null })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(writeFromSession(rt, s, other.id, { path: '/a', content: 'x', readSha256: null })).rejects.toMatchObject({ code: 'forbidden' });
    const rw = await sessionWith(other.id, 'read_write');
    await expect(writeFromSession(rt, rw, other.id, { path: '/a/../../b', content: 'x', readSha256: null })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await rt.memory.listVersions(other.id, { view: 'basic', limit: 10 })).data).toEqual([]);
  });
});
