import 'server-only';
import { MAX_SESSION_REPOSITORIES, ResourceParams } from '~/lib/agent';
import { InvalidInputError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';
import type { FileResource, SessionFileStore } from '~/server/files/session-files';
import { type MemoryStoreResource, memoryResourcesOf } from '~/server/memory/session-memory';
import type { RepositoryResource, RepositoryStore } from '~/server/proxy/repository-store';
import type { SessionRows } from '~/server/session/store';

/**
 * A session's resources, whichever edge asks (`/v1/sessions/{id}/resources` and the session page):
 * repositories (their tokens sealed, never answered), files of the Files API, and the memory stores
 * attached at create. A file added to or removed from a running session reaches its hands before
 * their next call (server/hands/hand-mounts.ts). Memory stores are fixed for the session's life: the
 * SDK's `resources.add` takes files only, and the system prompt names the stores from the start.
 * The edge has already checked that the session exists and the caller may change it.
 */
export interface ResourceDeps {
  repositories: Pick<RepositoryStore, 'add' | 'list' | 'get' | 'remove' | 'setToken'>;
  sessionFiles: Pick<SessionFileStore, 'add' | 'list' | 'find' | 'get' | 'remove'>;
  store: Pick<SessionRows, 'getSession'>;
}

export type SessionResource = RepositoryResource | FileResource | MemoryStoreResource;

/** What a resource is known by: its id, or a memory store's id (the SDK gives that kind none of its own). */
export const resourceKey = (r: SessionResource): string => ('id' in r ? r.id : r.memory_store_id);

async function memoryOf(d: ResourceDeps, sessionId: string): Promise<MemoryStoreResource[]> {
  return memoryResourcesOf((await d.store.getSession(sessionId))?.resources ?? []);
}

/** Every kind, in creation order (ids are ULIDs; a memory store sorts by its store's id). */
export async function listResources(d: ResourceDeps, sessionId: string): Promise<SessionResource[]> {
  const [repos, files, memory] = await Promise.all([d.repositories.list(sessionId), d.sessionFiles.list(sessionId), memoryOf(d, sessionId)]);
  return [...repos, ...files, ...memory].sort((a, b) => (resourceKey(a) < resourceKey(b) ? -1 : resourceKey(a) > resourceKey(b) ? 1 : 0));
}

export async function addResource(d: ResourceDeps, sessionId: string, body: unknown): Promise<SessionResource> {
  const parsed = ResourceParams.safeParse(body);
  if (!parsed.success) throw new InvalidInputError(`body: ${describeZodError(parsed.error)}`);
  const p = parsed.data;
  switch (p.type) {
    case 'github_repository': {
      if ((await d.repositories.list(sessionId)).length >= MAX_SESSION_REPOSITORIES) throw new InvalidInputError(`session ${sessionId} already has ${MAX_SESSION_REPOSITORIES} repositories`);
      const [made] = await d.repositories.add(sessionId, [p]);
      return made!;
    }
    case 'file': {
      const [made] = await d.sessionFiles.add(sessionId, [p]);
      return made!;
    }
    case 'memory_store':
      throw new InvalidInputError('body.type: a memory store is attached when the session is created (resources of sessions.create); a running session takes files only');
    default:
      return unreachable(p);
  }
}

export async function getResource(d: ResourceDeps, sessionId: string, resourceId: string): Promise<SessionResource> {
  const memory = (await memoryOf(d, sessionId)).find((m) => m.memory_store_id === resourceId);
  return memory ?? (await d.sessionFiles.find(sessionId, resourceId)) ?? d.repositories.get(sessionId, resourceId);
}

async function refuseMemoryStore(d: ResourceDeps, sessionId: string, resourceId: string, what: string): Promise<void> {
  if ((await memoryOf(d, sessionId)).some((m) => m.memory_store_id === resourceId)) {
    throw new InvalidInputError(`resource ${resourceId} is a memory store: it stays attached for the session's life, so it cannot be ${what}`);
  }
}

/** A repository's new token (the SDK's `update`); a file has none. */
export async function updateResourceToken(d: ResourceDeps, sessionId: string, resourceId: string, token: string): Promise<SessionResource> {
  await refuseMemoryStore(d, sessionId, resourceId, 'updated');
  if (await d.sessionFiles.find(sessionId, resourceId)) throw new InvalidInputError(`resource ${resourceId} is a file: only a repository's authorization_token can be updated`);
  return d.repositories.setToken(sessionId, resourceId, token);
}

export async function removeResource(d: ResourceDeps, sessionId: string, resourceId: string): Promise<{ id: string; type: 'session_resource_deleted' }> {
  await refuseMemoryStore(d, sessionId, resourceId, 'removed');
  if (await d.sessionFiles.find(sessionId, resourceId)) {
    await d.sessionFiles.remove(sessionId, resourceId);
  } else {
    await d.repositories.remove(sessionId, resourceId);
  }
  return { id: resourceId, type: 'session_resource_deleted' };
}
