import 'server-only';
import { MAX_SESSION_REPOSITORIES, ResourceParams } from '~/lib/agent';
import { InvalidInputError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';
import type { FileResource, SessionFileStore } from '~/server/files/session-files';
import type { RepositoryResource, RepositoryStore } from '~/server/proxy/repository-store';

/**
 * A session's resources, whichever edge asks (`/v1/sessions/{id}/resources` and the session page):
 * repositories (their tokens sealed, never answered) and files of the Files API. A file added to or
 * removed from a running session reaches its hands before their next call (server/hands/hand-mounts.ts).
 * The edge has already checked that the session exists and the caller may change it.
 */
export interface ResourceDeps {
  repositories: Pick<RepositoryStore, 'add' | 'list' | 'get' | 'remove' | 'setToken'>;
  sessionFiles: Pick<SessionFileStore, 'add' | 'list' | 'find' | 'get' | 'remove'>;
}

export type SessionResource = RepositoryResource | FileResource;

/** Both kinds, in creation order (ids are ULIDs). */
export async function listResources(d: ResourceDeps, sessionId: string): Promise<SessionResource[]> {
  const [repos, files] = await Promise.all([d.repositories.list(sessionId), d.sessionFiles.list(sessionId)]);
  return [...repos, ...files].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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
      throw new InvalidInputError('body: memory_store resources are not supported by Paddock yet');
    default:
      return unreachable(p);
  }
}

export async function getResource(d: ResourceDeps, sessionId: string, resourceId: string): Promise<SessionResource> {
  return (await d.sessionFiles.find(sessionId, resourceId)) ?? d.repositories.get(sessionId, resourceId);
}

/** A repository's new token (the SDK's `update`); a file has none. */
export async function updateResourceToken(d: ResourceDeps, sessionId: string, resourceId: string, token: string): Promise<SessionResource> {
  if (await d.sessionFiles.find(sessionId, resourceId)) throw new InvalidInputError(`resource ${resourceId} is a file: only a repository's authorization_token can be updated`);
  return d.repositories.setToken(sessionId, resourceId, token);
}

export async function removeResource(d: ResourceDeps, sessionId: string, resourceId: string): Promise<{ id: string; type: 'session_resource_deleted' }> {
  if (await d.sessionFiles.find(sessionId, resourceId)) {
    await d.sessionFiles.remove(sessionId, resourceId);
  } else {
    await d.repositories.remove(sessionId, resourceId);
  }
  return { id: resourceId, type: 'session_resource_deleted' };
}
