import type { MemoryStoreResourceParams } from '~/lib/agent';
import type { MemoryStore } from '~/server/memory/memory-types';
import { MEMORY_MOUNTS } from '~/lib/mounts';

/** Where a session's memory stores are mounted: `/mnt/memory/<store name>/`. */
export const MEMORY_MOUNT_ROOT = MEMORY_MOUNTS;

/**
 * A memory store as attached to a session (`BetaManagedAgentsMemoryStoreResource`): its name and
 * description snapshotted at attach time, its mount path derived from the name.
 */
export interface MemoryStoreResource {
  type: 'memory_store';
  memory_store_id: string;
  access: 'read_write' | 'read_only';
  name: string;
  description: string;
  instructions: string | null;
  mount_path: string;
}

/** A directory name for a store: its name with anything but letters, digits, `.`, `_` and `-` as `-`. */
function dirName(name: string): string {
  const d = name
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._-]+/gu, '-')
    .replace(/^[-.]+|-+$/g, '');
  return d.length > 0 ? d.slice(0, 100) : 'store';
}

/** The resources for a session's memory store params, in order, each at its own mount path (a clash gets `-2`, `-3`…). */
export function memoryResourcesFor(params: readonly MemoryStoreResourceParams[], stores: ReadonlyMap<string, MemoryStore>): MemoryStoreResource[] {
  const taken = new Set<string>();
  return params.map((p) => {
    const s = stores.get(p.memory_store_id)!;
    const base = dirName(s.name);
    let dir = base;
    for (let n = 2; taken.has(dir); n++) dir = `${base}-${n}`;
    taken.add(dir);
    return { type: 'memory_store', memory_store_id: s.id, access: p.access ?? 'read_write', name: s.name, description: s.description, instructions: p.instructions ?? null, mount_path: `${MEMORY_MOUNT_ROOT}/${dir}` };
  });
}

/** The memory store resources a session row keeps (its `resources`), whatever else is there. */
export function memoryResourcesOf(resources: readonly unknown[]): MemoryStoreResource[] {
  return resources.filter((r): r is MemoryStoreResource => typeof r === 'object' && r !== null && (r as { type?: unknown }).type === 'memory_store');
}

/**
 * Writes each changed file back to the store it lies in, by `write` (its path in that store, e.g.
 * `/notes/a.md`); what was refused, one sentence each: a file outside every store of the session,
 * a sentence `write` returns, or what it threw (as `why` words it).
 */
export async function saveChangesByStore<S extends { mount_path: string }, C extends { mountPath: string }>(
  stores: readonly S[],
  changes: readonly C[],
  write: (store: S, path: string, change: C) => Promise<string | undefined>,
  why: (e: unknown) => string = (e) => (e instanceof Error ? e.message : String(e)),
): Promise<string[]> {
  const problems: string[] = [];
  for (const change of changes) {
    const store = stores.find((s) => change.mountPath.startsWith(`${s.mount_path}/`));
    if (!store) {
      problems.push(`${change.mountPath}: not inside a memory store of this session (each is a folder under /mnt/memory)`);
      continue;
    }
    try {
      const refused = await write(store, change.mountPath.slice(store.mount_path.length), change);
      if (refused) problems.push(`${change.mountPath}: ${refused}`);
    } catch (e) {
      problems.push(`${change.mountPath}: ${why(e)}`);
    }
  }
  return problems;
}
