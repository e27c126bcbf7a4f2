import 'server-only';
import type Anthropic from '@anthropic-ai/sdk';
import { type Mount, SKILL_MOUNTS } from '~/lib/mounts';
import type { MemoryChange, SessionMounts } from '~/server/hands/mount-port';
import { logger } from '~/server/log';
import { filesOfZip } from '~/server/skills/skill-bundle';
import { changesByStore } from '~/server/memory/session-memory';

const log = logger('worker-mounts');

/** A skill version's files never change: unpacked once per worker (a few dozen at most). */
const SKILL_CACHE = 64;
/** Memories' contents kept by id and hash, so a call fetches only what changed (at most this many characters). */
const MEMORY_CACHE_BYTES = 32 * 1024 * 1024;

/** What a worker keeps between calls and items: unpacked skill versions and memories' contents. */
export interface WorkerMountCache {
  skills: Map<string, Mount[]>;
  memories: Map<string, { sha: string; content: string }>;
  memoryBytes: number;
}
export const newWorkerMountCache = (): WorkerMountCache => ({ skills: new Map(), memories: new Map(), memoryBytes: 0 });

function remember(cache: WorkerMountCache, id: string, sha: string, content: string): void {
  const old = cache.memories.get(id);
  if (old) cache.memoryBytes -= old.content.length;
  cache.memories.delete(id);
  cache.memories.set(id, { sha, content });
  cache.memoryBytes += content.length;
  // Oldest first: a store larger than the cache is fetched again, never wrong.
  for (const [k, v] of cache.memories) {
    if (cache.memoryBytes <= MEMORY_CACHE_BYTES) break;
    cache.memories.delete(k);
    cache.memoryBytes -= v.content.length;
  }
}

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
        remember(cache, m.id, full.content_sha256, full.content ?? '');
        known = { sha: full.content_sha256, content: full.content ?? '' };
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
    if (cache.skills.size >= SKILL_CACHE) cache.skills.delete(cache.skills.keys().next().value!);
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

    async saveMemory(_sessionId, changes: readonly MemoryChange[]) {
      const problems: string[] = [];
      for (const w of changesByStore(stores, changes)) {
        if ('refused' in w) {
          problems.push(w.refused);
          continue;
        }
        const { change: c, store, path } = w;
        const memory_store_id = store.memory_store_id;
        const id = ids.get(c.mountPath);
        try {
          if (c.readSha256 === null) {
            if (c.content !== null) await client.beta.memoryStores.memories.create(memory_store_id, { path, content: c.content });
          } else if (id === undefined) {
            problems.push(`${c.mountPath}: was not placed by this worker; read it again before changing it`);
          } else if (c.content === null) {
            await client.beta.memoryStores.memories.delete(id, { memory_store_id, expected_content_sha256: c.readSha256 });
          } else {
            await client.beta.memoryStores.memories.update(id, { memory_store_id, content: c.content, precondition: { type: 'content_sha256', content_sha256: c.readSha256 } });
          }
        } catch (e) {
          problems.push(`${c.mountPath}: ${reason(e)}`);
        }
      }
      return problems;
    },

    saveOutputs() {
      // The item's token cannot upload: a worker's outputs stay in its hand's folder.
      return Promise.resolve();
    },
  };
}
