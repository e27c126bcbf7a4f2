import 'server-only';
import { ForbiddenError, NotFoundError } from '~/lib/errors';
import { MemoryConflictError } from '~/lib/memory-errors';
import { checkMemoryPath } from '~/lib/memory-path';
import type { MemoryRepo } from '~/server/memory/memory-repo';
import type { Memory } from '~/server/memory/memory-types';
import { memoryResourcesOf } from '~/server/memory/session-memory';
import type { SessionStore } from '~/server/session/store';

export interface MountWriteDeps {
  store: Pick<SessionStore, 'getSession'>;
  memory: Pick<MemoryRepo, 'memoryAt' | 'createMemory' | 'updateMemory' | 'deleteMemory'>;
}

/**
 * One file the agent changed under a mounted memory store, as the mount layer reports it after a
 * tool call: its path in the store, its new content (null: deleted), and the SHA-256 it had when
 * the hand got it (null: it did not exist then).
 */
export interface MountWrite {
  path: string;
  content: string | null;
  readSha256: string | null;
}

/**
 * A session's change to a memory store, made a version by `session_actor` — for the mount layer to
 * call once it is wired. The session must have the store attached `read_write` (else 403). The
 * change applies only if the memory is still what the hand read: a write from a session that read
 * a copy another session (or a program) has changed since is `memory_precondition_failed_error`,
 * a creation at a path taken meanwhile `memory_path_conflict_error`: the agent sees a tool error,
 * and no update is ever lost silently.
 */
export async function writeFromSession(d: MountWriteDeps, sessionId: string, storeId: string, w: MountWrite): Promise<Memory | { id: string; type: 'memory_deleted' } | null> {
  const session = await d.store.getSession(sessionId);
  if (!session) throw new NotFoundError('session', sessionId);
  const attached = memoryResourcesOf(session.resources).find((r) => r.memory_store_id === storeId);
  if (!attached) throw new ForbiddenError(`session ${sessionId} does not have memory store ${storeId} attached`);
  if (attached.access !== 'read_write') throw new ForbiddenError(`memory store ${attached.name} is mounted read-only in session ${sessionId}`);
  const path = checkMemoryPath(w.path);
  const actor = { type: 'session_actor' as const, session_id: sessionId };
  const current = await d.memory.memoryAt(storeId, path);
  if (current === null) {
    if (w.readSha256 !== null) throw new MemoryConflictError('memory_precondition_failed_error', `memory at ${path} was deleted since this session read it`);
    // Deleting what never was and still is not: nothing to do.
    return w.content === null ? null : d.memory.createMemory(storeId, { path, content: w.content }, actor);
  }
  if (w.readSha256 === null) throw new MemoryConflictError('memory_path_conflict_error', `memory ${current.id} was written at ${path} since this session read the store`, { conflicting_memory_id: current.id, conflicting_path: path });
  if (w.content === null) return d.memory.deleteMemory(storeId, current.id, w.readSha256, actor);
  return d.memory.updateMemory(storeId, current.id, { content: w.content, expectedSha256: w.readSha256 }, actor);
}
