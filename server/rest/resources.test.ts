import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'pdk_test_key_0123456789abcdef';
const TOKEN = 'ghp_FIRSTsecret0123456789';
const ROTATED = 'ghp_SECONDsecret9876543210';

let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-resources-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every row of the tables a token could end up in, as text. */
async function allRows(): Promise<string> {
  const db = (rt.store as KyselySessionStore).db;
  const parts = await Promise.all([db.selectFrom('sessions').selectAll().execute(), db.selectFrom('events').selectAll().execute(), db.selectFrom('session_resources').selectAll().execute(), db.selectFrom('repository_tokens').selectAll().execute()]);
  return JSON.stringify(parts);
}

const get = (p: string) => fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) => r.text());

describe('session resources through the official SDK', () => {
  it('stores a repository token sealed at session create and never returns it', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'github_repository', url: 'https://github.com/acme/widgets.git', authorization_token: TOKEN, checkout: { type: 'branch', name: 'dev' } }] });
    expect(session.resources).toEqual([
      { id: expect.stringMatching(/^sesrsc_[0-9A-Z]{26}$/) as unknown, type: 'github_repository', url: 'https://github.com/acme/widgets.git', mount_path: '/workspace/widgets', checkout: { type: 'branch', name: 'dev' }, created_at: expect.any(String) as unknown, updated_at: expect.any(String) as unknown },
    ]);
    const rid = (session.resources[0] as { id: string }).id;
    const listed = [];
    for await (const r of client.beta.sessions.resources.list(session.id)) listed.push(r);
    const retrieved = await client.beta.sessions.resources.retrieve(rid, { session_id: session.id });
    expect(listed).toEqual([retrieved]);
    const served = [JSON.stringify(session), JSON.stringify(listed), JSON.stringify(retrieved), await get(`/v1/sessions/${session.id}`), await get(`/v1/sessions`), await get(`/v1/sessions/${session.id}/resources`), await get(`/v1/sessions/${session.id}/events`)].join('\n');
    expect(served).not.toContain(TOKEN);
    // At rest: only the sealed form, and only in its own table.
    const rows = await allRows();
    expect(rows).not.toContain(TOKEN);
    expect(rows).toContain('wrappedKey');
    await expect(rt.repositories.token(session.id, rid)).resolves.toBe(TOKEN);
  });

  it('adds, rotates the token of and deletes a repository resource', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    // The SDK types `add` for files only; a repository is the same call with its own body.
    const added = (await client.beta.sessions.resources.add(session.id, { type: 'github_repository', url: 'https://github.com/acme/app', authorization_token: TOKEN, mount_path: '/workspace/src/app' } as never)) as unknown as { id: string; mount_path: string };
    expect(added).toMatchObject({ type: 'github_repository', url: 'https://github.com/acme/app', mount_path: '/workspace/src/app', checkout: null });
    expect(JSON.stringify(added)).not.toContain(TOKEN);

    const updated = await client.beta.sessions.resources.update(added.id, { session_id: session.id, authorization_token: ROTATED });
    expect(JSON.stringify(updated)).not.toContain(ROTATED);
    await expect(rt.repositories.token(session.id, added.id)).resolves.toBe(ROTATED);
    expect(await allRows()).not.toContain(ROTATED);

    expect(await client.beta.sessions.resources.delete(added.id, { session_id: session.id })).toEqual({ id: added.id, type: 'session_resource_deleted' });
    await expect(client.beta.sessions.resources.retrieve(added.id, { session_id: session.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(rt.repositories.token(session.id, added.id)).resolves.toBeNull();
    expect((await client.beta.sessions.retrieve(session.id)).resources).toEqual([]);
  });

  it("refuses what it cannot do, and never reaches another session's resource", async () => {
    const a = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'github_repository', url: 'https://github.com/acme/a', authorization_token: TOKEN }] });
    const b = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const rid = (a.resources[0] as { id: string }).id;
    await expect(client.beta.sessions.resources.retrieve(rid, { session_id: b.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.beta.sessions.resources.update(rid, { session_id: b.id, authorization_token: ROTATED })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.beta.sessions.resources.delete(rid, { session_id: b.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(rt.repositories.token(a.id, rid)).resolves.toBe(TOKEN);
    await expect(client.beta.sessions.resources.add(b.id, { type: 'file', file_id: 'file_1' })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.beta.sessions.resources.add(b.id, { type: 'github_repository', url: 'http://github.com/acme/a' } as never)).rejects.toThrow(/https/);
    await expect(client.beta.sessions.resources.add(b.id, { type: 'github_repository', url: 'https://x:y@github.com/acme/a' } as never)).rejects.toThrow(/without credentials/);
    await expect(client.beta.sessions.resources.add(b.id, { type: 'github_repository', url: 'https://github.com/acme/a', mount_path: '/workspace/../etc' } as never)).rejects.toThrow(/mount_path/);
    await expect(client.beta.sessions.resources.update(rid, { session_id: a.id, authorization_token: ROTATED, url: 'https://evil.example/x' } as never)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(client.beta.sessions.resources.list('sesn_nope')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('creates a session with its tokens or not at all', async () => {
    const add = vi.spyOn(rt.repositories, 'add').mockRejectedValueOnce(new Error('disk full'));
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'github_repository', url: 'https://github.com/acme/a', authorization_token: TOKEN }] })).rejects.toBeInstanceOf(Anthropic.InternalServerError);
    expect(add).toHaveBeenCalledOnce();
    expect((await client.beta.sessions.list()).data).toEqual([]);
  });

  it('deletes its resources and sealed tokens with the session', async () => {
    const s = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'github_repository', url: 'https://github.com/acme/a', authorization_token: TOKEN }] });
    const rid = (s.resources[0] as { id: string }).id;
    await rt.repositories.issueCapability(s.id, rid, 'sandbox-1');
    await client.beta.sessions.delete(s.id);
    const db = (rt.store as KyselySessionStore).db;
    for (const t of ['session_resources', 'repository_tokens', 'git_capabilities'] as const) expect(await db.selectFrom(t).selectAll().execute(), t).toEqual([]);
  });
});

/** A file in the Files API, uploaded through the SDK. */
async function upload(name: string, text: string) {
  return client.beta.files.upload({ file: await toFile(Buffer.from(text), name, { type: 'text/plain' }) });
}

describe('file resources through the official SDK', () => {
  it('mounts a file at create under /mnt/session/uploads and adds, lists, retrieves and deletes others', async () => {
    const a = await upload('a.csv', 'x,y\n1,2\n');
    const b = await upload('b.txt', 'hello');
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'file', file_id: a.id, mount_path: 'data/a.csv' }, { type: 'file', file_id: b.id }] });
    expect(session.resources).toEqual([
      { id: expect.stringMatching(/^sesrsc_/) as unknown, type: 'file', file_id: a.id, mount_path: '/mnt/session/uploads/data/a.csv', created_at: expect.any(String) as unknown, updated_at: expect.any(String) as unknown },
      { id: expect.stringMatching(/^sesrsc_/) as unknown, type: 'file', file_id: b.id, mount_path: `/mnt/session/uploads/${b.id}`, created_at: expect.any(String) as unknown, updated_at: expect.any(String) as unknown },
    ]);
    const added = await client.beta.sessions.resources.add(session.id, { type: 'file', file_id: a.id, mount_path: '/mnt/session/uploads/again.csv' });
    expect(added).toMatchObject({ type: 'file', file_id: a.id, mount_path: '/mnt/session/uploads/again.csv' });
    await expect(client.beta.sessions.resources.retrieve(added.id, { session_id: session.id })).resolves.toEqual(added);
    const listed = [];
    for await (const r of client.beta.sessions.resources.list(session.id, { limit: 2 })) listed.push(r);
    expect(listed.map((r) => (r as { id: string }).id)).toEqual([...session.resources.map((r) => (r as { id: string }).id), added.id]);
    await expect(client.beta.sessions.resources.update(added.id, { session_id: session.id, authorization_token: 'ghp_x' })).rejects.toThrow(/is a file/);
    expect(await client.beta.sessions.resources.delete(added.id, { session_id: session.id })).toEqual({ id: added.id, type: 'session_resource_deleted' });
    expect((await client.beta.sessions.retrieve(session.id)).resources).toHaveLength(2);
    // A repository and a file of one session share the list, in the order they were added.
    const repo = (await client.beta.sessions.resources.add(session.id, { type: 'github_repository', url: 'https://github.com/acme/app' } as never)) as unknown as { id: string };
    expect((await client.beta.sessions.retrieve(session.id)).resources.map((r) => r.type)).toEqual(['file', 'file', 'github_repository']);
    await expect(client.beta.sessions.resources.retrieve(repo.id, { session_id: session.id })).resolves.toMatchObject({ type: 'github_repository' });
  });

  it('answers an unknown file 404 naming it, and creates nothing', async () => {
    const a = await upload('a.csv', '1');
    const missing = 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const err = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'file', file_id: a.id }, { type: 'file', file_id: missing }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(String(err)).toContain(missing);
    expect((await client.beta.sessions.list()).data).toEqual([]);
    const s = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const added = await client.beta.sessions.resources.add(s.id, { type: 'file', file_id: missing }).catch((e: unknown) => e);
    expect(added).toBeInstanceOf(Anthropic.NotFoundError);
    expect(String(added)).toContain(missing);
    expect(await allRows()).not.toContain('"file"');
  });

  it('refuses a mount path outside the uploads folder, a second file at one path, and more than 500 files', async () => {
    const a = await upload('a.csv', '1');
    const s = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    for (const bad of ['/etc/passwd', '../x', 'a/../../b', '/mnt/session/uploads/', 'a\u0000b', '/mnt/session/outputs/x']) {
      await expect(client.beta.sessions.resources.add(s.id, { type: 'file', file_id: a.id, mount_path: bad }), bad).rejects.toThrow(/mount_path/);
    }
    await client.beta.sessions.resources.add(s.id, { type: 'file', file_id: a.id, mount_path: 'one.csv' });
    await expect(client.beta.sessions.resources.add(s.id, { type: 'file', file_id: a.id, mount_path: 'one.csv' })).rejects.toThrow(/already the mount path/);
    const many = Array.from({ length: 499 }, (_, i) => ({ type: 'file' as const, file_id: a.id, mount_path: `m/${i}.csv` }));
    await rt.sessionFiles.add(s.id, many);
    const over = await client.beta.sessions.resources.add(s.id, { type: 'file', file_id: a.id, mount_path: 'over.csv' }).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(over)).toMatch(/at most 500 files/);
    expect(await rt.sessionFiles.list(s.id)).toHaveLength(500);
  });
});
