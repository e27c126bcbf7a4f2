import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillStore } from '~/server/skills/skill-store';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

const dirs: string[] = [];
let pg: TestDatabase | null = null;
beforeAll(async () => {
  pg = await createTestDatabase('paddock_skills');
});
afterAll(async () => {
  await pg?.drop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const backends: Array<[string, () => Promise<{ skills: SkillStore; close(): Promise<void> }>]> = [
  [
    'SQLite',
    async () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-skills-'));
      dirs.push(d);
      const store = await openSqliteStore({ file: path.join(d, 'db.sqlite') });
      return { skills: new SkillStore(store.db), close: () => store.close() };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const store = await openPostgresStore({ url: pg!.url });
      return { skills: new SkillStore(store.db), close: () => store.close() };
    },
  ],
];

describe.each(backends)('skills on %s', (_name, open) => {
  it('keeps versions newest first, moves latest back when the newest is deleted, refuses deleting the only one, and reports shared archives', async () => {
    const opened = await open();
    const skills = opened.skills;
    try {
      const s = await skills.create({ name: 'k', description: 'one', sha256: 'a'.repeat(64), size: 10 }, null);
      const v2 = await skills.addVersion(s.id, { name: 'k', description: 'two', sha256: 'b'.repeat(64), size: 11 });
      const v3 = await skills.addVersion(s.id, { name: 'k', description: 'three', sha256: 'a'.repeat(64), size: 10 });
      expect(Number(v3.id)).toBeGreaterThan(Number(v2.id));
      await expect(skills.addVersion(s.id, { name: 'other', description: 'x', sha256: 'c'.repeat(64), size: 1 })).rejects.toMatchObject({ code: 'conflict' });
      expect((await skills.listVersions(s.id, { limit: 10 })).data.map((v) => v.description)).toEqual(['three', 'two', 'one']);
      expect((await skills.getVersion(s.id, 'latest')).description).toBe('three');
      expect(await skills.deleteVersion(s.id, v3.id)).toEqual({ sha256: 'a'.repeat(64), shared: true });
      expect((await skills.get(s.id)).latest_version_id).toBe(v2.id);
      await skills.deleteVersion(s.id, s.latest_version_id);
      await expect(skills.deleteVersion(s.id, v2.id)).rejects.toMatchObject({ code: 'conflict' });
      expect(await skills.delete(s.id)).toEqual([{ sha256: 'b'.repeat(64), shared: false }]);
      await expect(skills.get(s.id)).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      await opened.close();
    }
  });
});
