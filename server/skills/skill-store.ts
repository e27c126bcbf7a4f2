import 'server-only';
import type { Kysely, Selectable } from 'kysely';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { type ListPage, keysetWalk, newestFirst, pageOf } from '~/server/session/keyset-page';
import type { Database, SkillVersionsTable, SkillsTable } from '~/server/session/schema';

/** `BetaSkill` and `BetaSkillVersion` as the SDK types them. */
export interface Skill {
  id: string;
  type: 'skill';
  display_name: string;
  latest_version_id: string;
  source: { type: 'custom' };
  created_at: string;
  updated_at: string;
}

export interface SkillVersion {
  id: string;
  type: 'skill_version';
  skill_id: string;
  name: string;
  description: string;
  created_at: string;
}

const skillOf = (r: Selectable<SkillsTable>): Skill => ({ id: r.id, type: 'skill', display_name: r.display_name, latest_version_id: r.latest_version, source: { type: 'custom' }, created_at: r.created_at, updated_at: r.updated_at });
const versionOf = (r: Selectable<SkillVersionsTable>): SkillVersion => ({ id: r.version, type: 'skill_version', skill_id: r.skill_id, name: r.name, description: r.description, created_at: r.created_at });

let lastMicros = 0;
/** Epoch microseconds, increasing in this process (and past `after`, the skill's newest). */
function nextVersion(after: string | null): string {
  lastMicros = Math.max(lastMicros + 1, Date.now() * 1000, after ? Number(after) + 1 : 0);
  return String(lastMicros);
}

export interface NewVersion {
  name: string;
  description: string;
  sha256: string;
  size: number;
}

/** Skills' rows in the session database; their archives are the caller's to store and free. */
export class SkillStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(v: NewVersion, displayName: string | null): Promise<Skill> {
    const now = new Date().toISOString();
    const id = newId('skill');
    const version = nextVersion(null);
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('skills').values({ id, name: v.name, display_name: displayName ?? v.name, latest_version: version, created_at: now, updated_at: now }).execute();
      await trx.insertInto('skill_versions').values({ skill_id: id, version, name: v.name, description: v.description, sha256: v.sha256, size_bytes: v.size, created_at: now }).execute();
    });
    return this.get(id);
  }

  /** A new latest version: its slug must be the skill's. */
  async addVersion(skillId: string, v: NewVersion): Promise<SkillVersion> {
    return this.db.transaction().execute(async (trx) => {
      const s = await trx.selectFrom('skills').selectAll().where('id', '=', skillId).executeTakeFirst();
      if (!s) throw new NotFoundError('skill', skillId);
      if (s.name !== v.name) throw new ConflictError(`skill ${skillId} is named ${JSON.stringify(s.name)}: a new version's SKILL.md must keep that name (got ${JSON.stringify(v.name)})`);
      const now = new Date().toISOString();
      const version = nextVersion(s.latest_version);
      const row = { skill_id: skillId, version, name: v.name, description: v.description, sha256: v.sha256, size_bytes: v.size, created_at: now };
      await trx.insertInto('skill_versions').values(row).execute();
      await trx.updateTable('skills').set({ latest_version: version, updated_at: now }).where('id', '=', skillId).execute();
      return versionOf(row);
    });
  }

  async get(id: string): Promise<Skill> {
    const r = await this.db.selectFrom('skills').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('skill', id);
    return skillOf(r);
  }

  async list(q: { limit: number; page?: string | undefined }): Promise<ListPage<Skill>> {
    const page = await newestFirst(this.db.selectFrom('skills').selectAll(), 'skills', q.page, q.limit);
    return { data: page.data.map(skillOf), next_page: page.next_page };
  }

  /** A version's row (`latest` is the newest), or NotFoundError naming the skill or the version. */
  async versionRow(skillId: string, version: string): Promise<Selectable<SkillVersionsTable>> {
    const s = await this.get(skillId);
    const v = version === 'latest' ? s.latest_version_id : version;
    const r = await this.db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('version', '=', v).executeTakeFirst();
    if (!r) throw new NotFoundError(`skill ${skillId} version`, version);
    return r;
  }

  async getVersion(skillId: string, version: string): Promise<SkillVersion> {
    return versionOf(await this.versionRow(skillId, version));
  }

  async listVersions(skillId: string, q: { limit: number; page?: string | undefined }): Promise<ListPage<SkillVersion>> {
    await this.get(skillId);
    const scope = `skill_versions:${skillId}`;
    const after = q.page ? decodeCursor(q.page, scope, [z.string()]) : null;
    // Versions are digit strings of one length for centuries: by text is by time.
    const rows = await keysetWalk(this.db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId), { key: 'version', walk: 'desc', after: after && { key: after[0] }, limit: q.limit }).execute();
    const page = pageOf(rows, q.limit, (last) => encodeCursor(scope, [last.version]));
    return { data: page.data.map(versionOf), next_page: page.next_page };
  }

  /** Removes one version (never the only one: delete the skill); returns the archive's address and whether other rows still use it. */
  async deleteVersion(skillId: string, version: string): Promise<{ sha256: string; shared: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const s = await trx.selectFrom('skills').selectAll().where('id', '=', skillId).executeTakeFirst();
      if (!s) throw new NotFoundError('skill', skillId);
      const r = await trx.deleteFrom('skill_versions').where('skill_id', '=', skillId).where('version', '=', version).returning(['sha256']).executeTakeFirst();
      if (!r) throw new NotFoundError(`skill ${skillId} version`, version);
      const newest = await trx.selectFrom('skill_versions').select('version').where('skill_id', '=', skillId).orderBy('version', 'desc').limit(1).executeTakeFirst();
      if (!newest) throw new ConflictError(`version ${version} is the only one of skill ${skillId}: delete the skill instead`);
      if (s.latest_version === version) await trx.updateTable('skills').set({ latest_version: newest.version, updated_at: new Date().toISOString() }).where('id', '=', skillId).execute();
      return { sha256: r.sha256, shared: await this.shared(trx, r.sha256) };
    });
  }

  /** The skill and all its versions; returns each archive's address and whether other rows still use it. */
  async delete(skillId: string): Promise<Array<{ sha256: string; shared: boolean }>> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('skills').where('id', '=', skillId).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw new NotFoundError('skill', skillId);
      const gone = await trx.deleteFrom('skill_versions').where('skill_id', '=', skillId).returning(['sha256']).execute();
      const out = [];
      for (const sha of new Set(gone.map((g) => g.sha256))) out.push({ sha256: sha, shared: await this.shared(trx, sha) });
      return out;
    });
  }

  /** Skills by id (unknown ones left out), with their latest version: what agents and sessions name. */
  async byIds(ids: readonly string[]): Promise<Map<string, Skill>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('skills').selectAll().where('id', 'in', [...ids]).execute();
    return new Map(rows.map((r) => [r.id, skillOf(r)]));
  }

  private async shared(trx: Kysely<Database>, sha256: string): Promise<boolean> {
    const v = await trx.selectFrom('skill_versions').select('skill_id').where('sha256', '=', sha256).limit(1).executeTakeFirst();
    if (v) return true;
    return (await trx.selectFrom('files').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()) !== undefined;
  }
}
