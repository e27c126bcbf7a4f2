import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError } from '~/lib/errors';
import { RepositoryStore, defaultMountPath } from '~/server/proxy/repository-store';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { newMasterKey } from '~/server/vault/envelope';

const URL_A = 'https://github.com/acme/a.git';
let dir: string;
let store: KyselySessionStore;
let repos: RepositoryStore;
let pgDb: TestDatabase | null = null;

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_repos');
});
afterAll(async () => {
  await pgDb?.drop();
});

describe.each(['sqlite', 'postgres'] as const)('repository store on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-repos-'));
    if (kind === 'sqlite') store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    else {
      store = await openPostgresStore({ url: pgDb!.url });
      await sql`truncate table git_capabilities, repository_tokens, session_resources`.execute(store.db);
    }
    repos = new RepositoryStore(store.db, newMasterKey());
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const session = async () => (await store.createSession({})).id;

  it('keeps resources in order with their token sealed, rotates it, and removes everything with the resource', async () => {
    const s = await session();
    const [a, b] = await repos.add(s, [{ type: 'github_repository', url: URL_A, authorization_token: 'tok-a' }, { type: 'github_repository', url: 'https://h/x/b', checkout: { type: 'commit', sha: 'abc1234' } }]);
    expect((await repos.list(s)).map((r) => r.id)).toEqual([a!.id, b!.id]);
    expect(a!.mount_path).toBe('/workspace/a');
    await expect(repos.token(s, a!.id)).resolves.toBe('tok-a');
    await expect(repos.token(s, b!.id)).resolves.toBeNull();
    await repos.setToken(s, b!.id, 'tok-b');
    await expect(repos.token(s, b!.id)).resolves.toBe('tok-b');
    const cap = await repos.issueCapability(s, a!.id, 'sandbox-1');
    await expect(repos.resolveCapability(cap)).resolves.toEqual({ sessionId: s, resourceId: a!.id, hand: 'sandbox-1', url: URL_A });
    await repos.remove(s, a!.id);
    await expect(repos.resolveCapability(cap)).resolves.toBeNull();
    await expect(repos.token(s, a!.id)).resolves.toBeNull();
    await expect(repos.get(s, a!.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('stores only a capability hash, and revokes by hand and by session', async () => {
    const s = await session();
    const [r] = await repos.add(s, [{ type: 'github_repository', url: URL_A }]);
    const one = await repos.issueCapability(s, r!.id, 'sandbox-1');
    const two = await repos.issueCapability(s, r!.id, 'sandbox-2');
    expect(one).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(await store.db.selectFrom('git_capabilities').selectAll().execute())).not.toContain(one);
    await repos.revokeHand(s, 'sandbox-1');
    await expect(repos.resolveCapability(one)).resolves.toBeNull();
    await expect(repos.resolveCapability(two)).resolves.not.toBeNull();
    await repos.removeSession(s);
    await expect(repos.resolveCapability(two)).resolves.toBeNull();
    expect(await repos.list(s)).toEqual([]);
    await expect(repos.resolveCapability('not a capability')).resolves.toBeNull();
  });

  it("does not open a sealed token moved onto another resource's row", async () => {
    const s = await session();
    const [a, b] = await repos.add(s, [{ type: 'github_repository', url: URL_A, authorization_token: 'tok-a' }, { type: 'github_repository', url: URL_A, authorization_token: 'tok-b' }]);
    const sealedA = (await store.db.selectFrom('repository_tokens').select('sealed').where('resource_id', '=', a!.id).executeTakeFirstOrThrow()).sealed;
    await store.db.updateTable('repository_tokens').set({ sealed: sealedA }).where('resource_id', '=', b!.id).execute();
    await expect(repos.token(s, b!.id)).rejects.toThrow(/sealed for another row/);
  });
});

describe('default mount path', () => {
  it('is /workspace/<repo-name>, without .git, and never a dot name', () => {
    expect(defaultMountPath('https://github.com/acme/widgets.git')).toBe('/workspace/widgets');
    expect(defaultMountPath('https://github.com/acme/widgets/')).toBe('/workspace/widgets');
    expect(defaultMountPath('https://h/a/..%2F..')).toBe('/workspace/__..');
    expect(defaultMountPath('https://h/a/.git')).toBe('/workspace/repository');
  });
});
