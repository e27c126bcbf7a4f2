import 'server-only';
import type { AgentSkill } from '~/lib/agent';
import { SKILL_MOUNTS } from '~/lib/mounts';
import type { BlobStore } from '~/server/files/blob-store';
import type { PromptAttachments } from '~/server/harness/core/attachments-prompt';
import type { MemoryRepo } from '~/server/memory/memory-repo';
import { type MemoryStoreResource, memoryResourcesOf } from '~/server/memory/session-memory';
import { filesOfZip } from '~/server/skills/skill-bundle';
import type { SkillStore } from '~/server/skills/skill-store';
import type { SessionStore } from '~/server/session/store';

/** Where a session's skills are mounted, read-only: `/mnt/skills/<name>/SKILL.md`. */
export const SKILLS_MOUNT_ROOT = SKILL_MOUNTS;

export interface AttachmentDeps {
  store: Pick<SessionStore, 'getSession'>;
  memory: Pick<MemoryRepo, 'allMemories'>;
  skills: Pick<SkillStore, 'versionRow'>;
  blobs: Pick<BlobStore, 'open'>;
}

interface ResolvedSkill {
  skill_id: string;
  version: string;
  name: string;
  description: string;
  sha256: string;
}

/** The session's skills at the versions they resolve to now (`latest`: the newest); a deleted one is left out. */
async function skillsOf(d: AttachmentDeps, skills: readonly AgentSkill[]): Promise<ResolvedSkill[]> {
  const out: ResolvedSkill[] = [];
  for (const s of skills) {
    const row = await d.skills.versionRow(s.skill_id, s.version).catch(() => null);
    if (row) out.push({ skill_id: s.skill_id, version: row.version, name: row.name, description: row.description, sha256: row.sha256 });
  }
  return out;
}

async function attached(d: AttachmentDeps, sessionId: string): Promise<{ skills: ResolvedSkill[]; memory: MemoryStoreResource[] }> {
  const session = await d.store.getSession(sessionId);
  if (!session) return { skills: [], memory: [] };
  return { skills: await skillsOf(d, session.agent?.skills ?? []), memory: memoryResourcesOf(session.resources) };
}

/** What a session's system prompt names: its skills and memory stores (the harness's `attachments` port). */
export async function promptAttachments(d: AttachmentDeps, sessionId: string): Promise<PromptAttachments> {
  const { skills, memory } = await attached(d, sessionId);
  return {
    skills: skills.map((s) => ({ name: s.name, description: s.description, path: `${SKILLS_MOUNT_ROOT}/${s.name}` })),
    memoryStores: memory.map((m) => ({ name: m.name, description: m.description, instructions: m.instructions, access: m.access, mount_path: m.mount_path })),
  };
}

/** One directory to put into a session's hands before its first tool call. */
export interface MountSource {
  /** Absolute path in the hand: `/mnt/memory/<store>` or `/mnt/skills/<name>`. */
  path: string;
  readOnly: boolean;
  /** Where its files come from (a write back to a memory store becomes a version by the session). */
  origin: { type: 'memory_store'; memory_store_id: string } | { type: 'skill'; skill_id: string; version: string };
  /** Its files, paths relative to `path`, read when the mount is made (not before). */
  files(): Promise<Array<{ path: string; data: Buffer }>>;
}

/**
 * What should be mounted into a session's hands, for the mount mechanism (lib/mounts.ts on the
 * session-files branch) to wire after merge: each memory store at its `mount_path` (read-only for
 * `read_only` access; its memories' paths, minus the leading slash, as files) and each skill
 * read-only at `/mnt/skills/<name>/` (the files of the version it resolves to). A write the agent
 * makes under a read_write store is for the mount layer to turn into a memory version with actor
 * `{type: 'session_actor', session_id}` (MemoryRepo.updateMemory with the content_sha256 it read
 * as the precondition, so a concurrent change is a conflict, never a lost update).
 */
export async function sessionMountSources(d: AttachmentDeps, sessionId: string): Promise<MountSource[]> {
  const { skills, memory } = await attached(d, sessionId);
  return [
    ...memory.map(
      (m): MountSource => ({
        path: m.mount_path,
        readOnly: m.access === 'read_only',
        origin: { type: 'memory_store', memory_store_id: m.memory_store_id },
        files: async () => (await d.memory.allMemories(m.memory_store_id)).map((x) => ({ path: x.path.slice(1), data: Buffer.from(x.content ?? '', 'utf8') })),
      }),
    ),
    ...skills.map(
      (s): MountSource => ({
        path: `${SKILLS_MOUNT_ROOT}/${s.name}`,
        readOnly: true,
        origin: { type: 'skill', skill_id: s.skill_id, version: s.version },
        files: async () => {
          const body = await d.blobs.open(s.sha256);
          const chunks: Buffer[] = [];
          for await (const c of body) chunks.push(c as Buffer);
          // The archive holds `<name>/…`: paths under the mount are what follows.
          return (await filesOfZip(Buffer.concat(chunks))).map((f) => ({ path: f.path.slice(s.name.length + 1), data: f.data }));
        },
      }),
    ),
  ];
}
