import 'server-only';
import { Readable } from 'node:stream';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { byContent } from '~/server/commands/file-commands';
import type { BlobStore } from '~/server/files/blob-store';
import { errorFields, logger } from '~/server/log';
import { type UploadedFile, bundleOf, zipOf } from '~/server/skills/skill-bundle';
import type { Skill, SkillStore, SkillVersion } from '~/server/skills/skill-store';

/**
 * Skills' use cases: an upload (a directory's files or one zip) is checked, repacked as one zip
 * under `<name>/`, stored in the BlobStore by its SHA-256 and recorded; deletes free an archive
 * once nothing refers to it (under the same per-content lock as files).
 */
const log = logger('skills');

export interface SkillDeps {
  skills: SkillStore;
  blobs: BlobStore;
}

async function store(d: SkillDeps, uploaded: readonly UploadedFile[], record: (v: { name: string; description: string; sha256: string; size: number }) => Promise<unknown>): Promise<void> {
  const bundle = await bundleOf(uploaded);
  const zip = await zipOf(bundle);
  const blob = await d.blobs.put(Readable.from([zip]), zip.length);
  await byContent.run(blob.sha256, async () => {
    try {
      await record({ name: bundle.name, description: bundle.description, sha256: blob.sha256, size: blob.size });
      await blob.commit();
    } catch (e) {
      await blob.discard();
      throw e;
    }
  });
}

export async function createSkill(d: SkillDeps, uploaded: readonly UploadedFile[], displayName: string | null): Promise<Skill> {
  if (displayName !== null && (displayName.trim().length === 0 || displayName.length > 255 || /[\r\n\0]/.test(displayName))) throw new InvalidInputError('display_name: one line of 1 to 255 characters');
  let made: Skill | null = null;
  await store(d, uploaded, async (v) => (made = await d.skills.create(v, displayName)));
  return made!;
}

export async function createSkillVersion(d: SkillDeps, skillId: string, uploaded: readonly UploadedFile[]): Promise<SkillVersion> {
  await d.skills.get(skillId);
  let made: SkillVersion | null = null;
  await store(d, uploaded, async (v) => (made = await d.skills.addVersion(skillId, v)));
  return made!;
}

async function free(d: SkillDeps, gone: Array<{ sha256: string; shared: boolean }>): Promise<void> {
  for (const g of gone) if (!g.shared) await byContent.run(g.sha256, () => d.blobs.delete(g.sha256));
}

export async function deleteSkill(d: SkillDeps, skillId: string): Promise<{ id: string; type: 'skill_deleted' }> {
  await free(d, await d.skills.delete(skillId));
  return { id: skillId, type: 'skill_deleted' };
}

export async function deleteSkillVersion(d: SkillDeps, skillId: string, version: string): Promise<{ id: string; type: 'skill_version_deleted' }> {
  await free(d, [await d.skills.deleteVersion(skillId, version)]);
  return { id: version, type: 'skill_version_deleted' };
}

/** A version's archive, streamed, named after the skill. */
export async function downloadSkillVersion(d: SkillDeps, skillId: string, version: string): Promise<{ name: string; size: number; body: Readable }> {
  const row = await d.skills.versionRow(skillId, version);
  try {
    return { name: row.name, size: Number(row.size_bytes), body: await d.blobs.open(row.sha256) };
  } catch (e) {
    log.error('skill archive missing', { skill: skillId, version, ...errorFields(e) });
    throw new NotFoundError(`content of skill ${skillId} version`, version);
  }
}
