import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '~/lib/errors';
import { FileStore } from '~/server/files/file-store';
import { SessionFileStore } from '~/server/files/session-files';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

let dir: string;
let pg: TestDatabase;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-session-files-'));
  pg = await createTestDatabase('paddock_session_files');
});
afterAll(async () => {
  await pg?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const backends: [string, () => Promise<KyselySessionStore>][] = [
  ['SQLite', () => openSqliteStore({ file: path.join(dir, `db-${Math.random()}.sqlite`) })],
  ['PostgreSQL', () => openPostgresStore({ url: pg.url })],
];

describe.each(backends)("a session's file resources on %s", (_name, open) => {
  it('adds all or none: an unknown file, a taken mount path or the cap of 500 leaves nothing behind', async () => {
    const store = await open();
    try {
      const files = new FileStore(store.db);
      const sessionFiles = new SessionFileStore(store.db);
      const s = (await store.createSession({})).id;
      const f = (await files.create({ filename: 'a', mimeType: 'text/plain', size: 1, sha256: 'a'.repeat(64), expiresAt: null, scopeId: null })).metadata.id;
      const missing = 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ';
      const at = (p: string) => ({ type: 'file' as const, file_id: f, mount_path: `/mnt/session/uploads/${p}` });
      await expect(sessionFiles.add(s, [at('x'), { ...at('y'), file_id: missing }])).rejects.toThrow(NotFoundError);
      await expect(sessionFiles.add(s, [at('x'), { ...at('y'), file_id: missing }])).rejects.toThrow(missing);
      await expect(sessionFiles.add(s, [at('x'), at('x')])).rejects.toThrow(/already the mount path/);
      expect(await sessionFiles.list(s)).toEqual([]);
      const made = await sessionFiles.add(s, Array.from({ length: 500 }, (_, i) => at(`f${i}`)));
      await expect(sessionFiles.add(s, [at('one-more')])).rejects.toThrow(/at most 500 files/);
      expect((await sessionFiles.list(s)).map((r) => r.id)).toEqual(made.map((r) => r.id).sort());
      // Expired files are as good as gone.
      const expired = (await files.create({ filename: 'b', mimeType: 'text/plain', size: 1, sha256: 'b'.repeat(64), expiresAt: new Date(Date.now() - 1000).toISOString(), scopeId: null })).metadata.id;
      await expect(sessionFiles.requireFiles([expired])).rejects.toThrow(expired);
      await sessionFiles.remove(s, made[0]!.id);
      expect(await sessionFiles.find(s, made[0]!.id)).toBeNull();
      expect(await sessionFiles.list(s)).toHaveLength(499);
    } finally {
      await store.close();
    }
  });
});

describe('file resources added by two PostgreSQL instances at once', () => {
  it('keeps the cap and the mount paths: of two racing adds of the 500th file, or of one path, exactly one lands', async () => {
    const [a, b] = [await openPostgresStore({ url: pg.url }), await openPostgresStore({ url: pg.url })];
    try {
      const files = new FileStore(a.db);
      const f = (await files.create({ filename: 'a', mimeType: 'text/plain', size: 1, sha256: 'c'.repeat(64), expiresAt: null, scopeId: null })).metadata.id;
      const at = (p: string) => ({ type: 'file' as const, file_id: f, mount_path: `/mnt/session/uploads/${p}` });
      const [sa, sb] = [new SessionFileStore(a.db), new SessionFileStore(b.db)];
      for (let round = 0; round < 5; round++) {
        const s = (await a.createSession({})).id;
        await sa.add(s, Array.from({ length: 499 }, (_, i) => at(`f${i}`)));
        const cap = await Promise.allSettled([sa.add(s, [at('last-a')]), sb.add(s, [at('last-b')])]);
        expect(cap.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(await sa.list(s)).toHaveLength(500);

        const t = (await a.createSession({})).id;
        const same = await Promise.allSettled([sa.add(t, [at('same')]), sb.add(t, [at('same')])]);
        expect(same.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(await sa.list(t)).toHaveLength(1);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});

