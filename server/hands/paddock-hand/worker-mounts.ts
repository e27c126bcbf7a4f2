import 'server-only';
import { LRUCache } from 'lru-cache';
import type Anthropic from '@anthropic-ai/sdk';
import { type Mount, SKILL_MOUNTS } from '~/lib/mounts';
import type { MemoryChange, SessionMounts } from '~/server/hands/mount-port';
import { logger } from '~/server/log';
import { filesOfZip } from '~/server/skills/skill-bundle';
import { saveChangesByStore } from '~/server/memory/session-memory';

const log = logger('worker-mounts');

/** What a worker keeps between calls and items: unpacked skill versions (a few dozen at most) and memories' contents by id and hash (up to 32 M characters), so a call fetches only what changed. */
export interface WorkerMountCache {
  skills: LRUCache<string, Mount[]>;
  memories: LRUCache<string, { sha: string; content: string }>;
}
export const newWorkerMountCache = (): WorkerMountCache => ({
  skills: new LRUCache({ max: 64 }),
  // A store larger than the cache is fetched again, never wrong.
  memories: new LRUCache({ maxSize: 32 * 1024 * 1024, sizeCalculation: (m) => Math.max(1, m.content.length) }),
});

interface StoreResource {
  memory_store_id: string;
  mount_path: string;
  name: string;
  access?: 'read_write' | 'read_only';
}

/** The part of a session object this needs (the SDK's `BetaManagedAgentsSession`). */
interface SessionShape {
  resources?: ReadonlyArray<{ type: string }>;
  agent?: { skills?: ReadonlyArray<{ type: string; skill_id: string; version?: string | null }> } | null;
}

const memoryStores = (s: SessionShape): StoreResource[] => (s.resources ?? []).filter((r): r is StoreResource & { type: string } => r.type === 'memory_store');

/** An API refusal's own sentence (`{error: {message}}`), not the SDK's status-prefixed text. */
function reason(e: unknown): string {
  const body = (e as { error?: { error?: { message?: unknown } } }).error;
  const message = body?.error?.message;
  return typeof message === 'string' ? message : e instanceof Error ? e.message : String(e);
}

/**
 * A self-hosted session's mounts as a worker gets them through /v1 with its work item's token
 * (which reads the session's memory stores and writes its read_write ones as the session, and
 * downloads its agent's skills: server/access/work-item-scope.ts): each memory store's memories
 * at its `mount_path`, each skill's files at `/mnt/skills/<name>/`, as the server's own hands get
 * them (server/commands/session-mounts.ts). What the agent changes under a store goes back as a
 * change with the content hash it read as the precondition, so a concurrent edit is refused by
 * name, never lost. The session's uploaded files and its outputs stay on the server: the item's
 * token does not reach the Files API.
 */
export function apiSessionMounts(client: Anthropic, cache: WorkerMountCache): SessionMounts {
  /** Each placed memory's id by its path in the hand, for an update or a delete. */
  const ids = new Map<string, string>();
  let stores: StoreResource[] = [];

  /** The store's memories, listed by hash (100 a page); only a memory whose hash is new to this worker is read whole. */
  async function storeMounts(store: StoreResource, readOnly: boolean): Promise<Mount[]> {
    const memory_store_id = store.memory_store_id;
    const out: Mount[] = [];
    for await (const m of client.beta.memoryStores.memories.list(memory_store_id, { limit: 100 })) {
      if (m.type !== 'memory') continue;
      const mountPath = `${store.mount_path}${m.path}`;
      ids.set(mountPath, m.id);
      let known = cache.memories.get(m.id);
      if (known?.sha !== m.content_sha256) {
        const full = await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id, view: 'full' });
        known = { sha: full.content_sha256, content: full.content ?? '' };
        cache.memories.set(m.id, known);
      }
      out.push({ mountPath, readOnly, version: known.sha, source: { contents: known.content } });
    }
    return out;
  }

  async function skillMounts(skillId: string, version: string): Promise<Mount[]> {
    const v = await client.beta.skills.versions.retrieve(version, { skill_id: skillId });
    const key = `${skillId}@${v.id}`;
    const known = cache.skills.get(key);
    if (known) return known;
    const zip = Buffer.from(await (await client.beta.skills.versions.download(v.id, { skill_id: skillId })).arrayBuffer());
    // The archive holds `<name>/…`: paths under the mount are what follows.
    const made = (await filesOfZip(zip))
      .filter((f) => f.path.startsWith(`${v.name}/`))
      .map((f): Mount => ({ mountPath: `${SKILL_MOUNTS}/${v.name}/${f.path.slice(v.name.length + 1)}`, readOnly: true, source: { contents: f.data } }));
    cache.skills.set(key, made);
    return made;
  }

  return {
    async mountsFor(sessionId) {
      const session = (await client.beta.sessions.retrieve(sessionId)) as unknown as SessionShape;
      stores = memoryStores(session);
      ids.clear();
      const mounts: Mount[] = [];
      for (const store of stores) mounts.push(...(await storeMounts(store, store.access === 'read_only')));
      for (const s of session.agent?.skills ?? []) {
        try {
          mounts.push(...(await skillMounts(s.skill_id, s.version ?? 'latest')));
        } catch (e) {
          // A skill deleted since the session started is left out, as the server's hands leave it.
          log.warn('skill not placed', { session: sessionId, skill: s.skill_id, reason: reason(e) });
        }
      }
      return mounts;
    },

    saveMemory(_sessionId, changes: readonly MemoryChange[]) {
      const memories = client.beta.memoryStores.memories;
      return saveChangesByStore(
        stores,
        changes,
        async ({ memory_store_id }, path, c) => {
          const id = ids.get(c.mountPath);
          if (c.readSha256 === null) {
            if (c.content !== null) await memories.create(memory_store_id, { path, content: c.content });
          } else if (id === undefined) {
            return 'was not placed by this worker; read it again before changing it';
          } else if (c.content === null) {
            await memories.delete(id, { memory_store_id, expected_content_sha256: c.readSha256 });
          } else {
            await memories.update(id, { memory_store_id, content: c.content, precondition: { type: 'content_sha256', content_sha256: c.readSha256 } });
          }
          return undefined;
        },
        reason,
      );
    },

    saveOutputs() {
      // The item's token cannot upload: a worker's outputs stay in its hand's folder.
      return Promise.resolve();
    },
  };
}
