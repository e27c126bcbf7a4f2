import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { isShareTokenShape, shareTokenExpiry, shareTokenOfPath } from '~/lib/share-token';
import { hashSecret } from '~/server/access/secrets';
import { MAX_LINKS_PER_SESSION, ShareLinks } from '~/server/access/share-links';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

let dir: string;
let store: KyselySessionStore;
let shares: ShareLinks;
let pgDb: TestDatabase | null = null;

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_shares');
});
afterAll(async () => {
  await pgDb?.drop();
});

describe('share tokens', () => {
  it('are 256 random bits with an optional expiry the guard can read without the database', () => {
    const t = `pds_${'A'.repeat(43)}`;
    expect(isShareTokenShape(t)).toBe(true);
    expect(shareTokenExpiry(t)).toBeNull();
    expect(shareTokenExpiry(`${t}.${(1_800_000_000_000).toString(36)}`)).toBe(1_800_000_000_000);
    for (const bad of ['', 'pds_', `pds_${'A'.repeat(42)}`, `pdk_${'A'.repeat(43)}`, `pds_${'A'.repeat(43)}.`, `pds_${'A'.repeat(43)}.ZZ`, `pds_${'A'.repeat(43)}/x`]) expect(isShareTokenShape(bad), bad).toBe(false);
    expect(shareTokenOfPath(`/share/${t}`)).toBe(t);
    expect(shareTokenOfPath('/share/a/b')).toBeNull();
    expect(shareTokenOfPath('/s/sesn_x')).toBeNull();
  });
});

describe.each(['sqlite', 'postgres'] as const)('share links on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-shares-'));
    if (kind === 'sqlite') store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    else {
      store = await openPostgresStore({ url: pgDb!.url });
      await sql`truncate table share_links`.execute(store.db);
    }
    shares = new ShareLinks(store.db);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores only the SHA-256 of a token shown once, and finds the link by the token', async () => {
    const s = (await store.createSession({})).id;
    const { token, link } = await shares.create(s, { label: 'for Ana', expiresAt: null, hideFiles: false });
    expect(isShareTokenShape(token)).toBe(true);
    expect(link).toMatchObject({ session_id: s, label: 'for Ana', hide_files: false, expires_at: null, expired: false });
    const rows = await store.db.selectFrom('share_links').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).toBe(hashSecret(token));
    expect(JSON.stringify(rows)).not.toContain(token.slice(4, 30));
    await expect(shares.lookup(token)).resolves.toEqual({ state: 'live', link });
    await expect(shares.lookup(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).resolves.toEqual({ state: 'gone' });
    await expect(shares.lookup('x'.repeat(5_000))).resolves.toEqual({ state: 'gone' });
  });

  it('keeps several links per session, lists them newest first, and revokes one without the others', async () => {
    const s = (await store.createSession({})).id;
    const other = (await store.createSession({})).id;
    const a = await shares.create(s, { label: 'a', expiresAt: null, hideFiles: false });
    const b = await shares.create(s, { label: 'b', expiresAt: Date.now() + 3_600_000, hideFiles: true });
    await shares.create(other, { label: 'elsewhere', expiresAt: null, hideFiles: false });
    expect((await shares.list(s)).map((l) => l.label)).toEqual(['b', 'a']);
    expect((await shares.list(s))[0]).toMatchObject({ hide_files: true, expired: false, expires_at: expect.any(String) as unknown });
    // Revoking names the session too: another session's link is not found.
    expect(await shares.revoke(other, a.link.id)).toBe(false);
    expect(await shares.revoke(s, a.link.id)).toBe(true);
    expect(await shares.revoke(s, a.link.id)).toBe(false);
    await expect(shares.lookup(a.token)).resolves.toEqual({ state: 'gone' });
    expect(await shares.isLive(a.link.id)).toBe(false);
    expect((await shares.lookup(b.token)).state).toBe('live');
    expect((await shares.list(s)).map((l) => l.label)).toEqual(['b']);
  });

  it('says a link past its expiry is expired (410), not unknown, and carries the expiry in the token', async () => {
    const s = (await store.createSession({})).id;
    const now = Date.now();
    const { token, link } = await shares.create(s, { label: '', expiresAt: now + 1_000, hideFiles: false }, now);
    expect(shareTokenExpiry(token)).toBe(now + 1_000);
    expect((await shares.lookup(token, now + 999)).state).toBe('live');
    expect(await shares.lookup(token, now + 1_000)).toMatchObject({ state: 'expired', link: { id: link.id, expired: true } });
    expect(await shares.isLive(link.id, now + 1_000)).toBe(false);
    await expect(shares.create(s, { label: '', expiresAt: now - 1, hideFiles: false })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('refuses a link to a session that does not exist, and more than the cap per session', async () => {
    await expect(shares.create('sesn_01J00000000000000000000000', { label: '', expiresAt: null, hideFiles: false })).rejects.toBeInstanceOf(NotFoundError);
    const s = (await store.createSession({})).id;
    for (let i = 0; i < MAX_LINKS_PER_SESSION; i++) await shares.create(s, { label: String(i), expiresAt: null, hideFiles: false });
    await expect(shares.create(s, { label: 'one too many', expiresAt: null, hideFiles: false })).rejects.toBeInstanceOf(InvalidInputError);
    expect(await store.db.selectFrom('share_links').select('id').execute()).toHaveLength(MAX_LINKS_PER_SESSION);
  });

  it('goes with its session when the session is deleted', async () => {
    const s = (await store.createSession({})).id;
    const { token } = await shares.create(s, { label: '', expiresAt: null, hideFiles: false });
    await store.deleteSession(s);
    await expect(shares.lookup(token)).resolves.toEqual({ state: 'gone' });
    expect(await store.db.selectFrom('share_links').select('id').execute()).toHaveLength(0);
  });
});
