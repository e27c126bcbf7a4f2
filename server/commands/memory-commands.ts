import 'server-only';
import { z } from 'zod';
import { describeZodError } from '~/lib/events';
import { InvalidInputError } from '~/lib/errors';
import { checkMemoryPath, checkPathPrefix } from '~/lib/memory-path';
import type { Caller } from '~/server/access/access';
import type { SessionDeps } from '~/server/commands/session-deps';
import { archiveNotifying, notify } from '~/server/commands/webhook-notify';
import type { MemoryListQuery, MemoryRepo, VersionListQuery } from '~/server/memory/memory-repo';
import type { Actor, Memory, MemoryPrefix, MemoryStore, MemoryVersion, MemoryView } from '~/server/memory/memory-types';
import type { ListPage } from '~/server/session/keyset-page';

/**
 * Memory stores' use cases, whichever edge calls: input checked here once (paths, content, names),
 * the caller turned into the actor its versions name. Edges only parse their transport.
 */
const Metadata = z.record(z.string().min(1).max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });
const MetadataPatch = z.record(z.string().min(1).max(64), z.string().max(512).nullable()).refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });
/** A store's name is also its directory under /mnt/memory: one line, no slash. */
const Name = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((n) => !/[/\\\p{Cc}\p{Cf}]/u.test(n) && n !== '.' && n !== '..', { message: 'must be one line without / or \\, and not . or ..' });
const Common = { betas: z.array(z.string().max(128)).max(20).optional(), workspace_id: z.string().max(128).optional() };
const Sha = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hexadecimal characters');

export const StoreCreateParams = z.object({ name: Name, description: z.string().max(4096).optional(), metadata: Metadata.optional(), ...Common }).strict();
export const StoreUpdateParams = z.object({ name: Name.nullish(), description: z.string().max(4096).nullish(), metadata: MetadataPatch.nullish(), ...Common }).strict();
export const MemoryCreateParams = z.object({ path: z.string().max(4096), content: z.string().nullable(), ...Common }).strict();
export const MemoryUpdateParams = z
  .object({ path: z.string().max(4096).nullish(), content: z.string().nullish(), precondition: z.object({ type: z.literal('content_sha256'), content_sha256: Sha.optional() }).strict().optional(), ...Common })
  .strict();

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new InvalidInputError(describeZodError(r.error));
  return r.data;
}

/** Who a change is by: a program's key, or the owner in the UI. (Sessions write through their mounts.) */
export function actorFor(caller: Caller): Actor {
  switch (caller.kind) {
    case 'api_key':
      return { type: 'api_actor', api_key_id: caller.keyId };
    case 'owner':
      return { type: 'user_actor', user_id: 'owner' };
    case 'work_item':
      // A worker writing back what its session's agent changed: the session is the author.
      if (caller.sessionId !== null) return { type: 'session_actor', session_id: caller.sessionId };
      throw new InvalidInputError("a work item's token without a session cannot change memories");
    default:
      throw new InvalidInputError(`a ${caller.kind} caller cannot change memories`);
  }
}

/** What a store's lifecycle uses: the repository, and where its webhook events go (memory_store.*). */
export interface MemoryDeps extends Pick<SessionDeps, 'webhooks'> {
  memory: MemoryRepo;
}

export async function createStore(d: MemoryDeps, input: unknown): Promise<MemoryStore> {
  const p = parse(StoreCreateParams, input);
  const store = await d.memory.createStore({ name: p.name, description: p.description, metadata: p.metadata });
  await notify(d, 'memory_store.created', store.id);
  return store;
}

/** Archiving an archived store changes nothing, and sends nothing. */
export async function archiveStore(d: MemoryDeps, id: string): Promise<MemoryStore> {
  return archiveNotifying(d, 'memory_store.archived', id, () => d.memory.getStore(id), () => d.memory.archiveStore(id));
}

export async function deleteStore(d: MemoryDeps, id: string): Promise<{ id: string; type: 'memory_store_deleted' }> {
  const deleted = await d.memory.deleteStore(id);
  await notify(d, 'memory_store.deleted', id);
  return deleted;
}

export function updateStore(repo: MemoryRepo, id: string, input: unknown): Promise<MemoryStore> {
  const p = parse(StoreUpdateParams, input);
  return repo.updateStore(id, { name: p.name, description: p.description, metadata: p.metadata });
}

export function createMemory(repo: MemoryRepo, storeId: string, input: unknown, actor: Actor, view: MemoryView = 'basic'): Promise<Memory> {
  const p = parse(MemoryCreateParams, input);
  return repo.createMemory(storeId, { path: checkMemoryPath(p.path), content: p.content ?? '' }, actor, view);
}

export function updateMemory(repo: MemoryRepo, storeId: string, id: string, input: unknown, actor: Actor, view: MemoryView = 'basic'): Promise<Memory> {
  const p = parse(MemoryUpdateParams, input);
  if (p.precondition && p.precondition.content_sha256 === undefined) throw new InvalidInputError('precondition.content_sha256: required with a content_sha256 precondition');
  const path = p.path == null ? undefined : checkMemoryPath(p.path);
  return repo.updateMemory(storeId, id, { content: p.content, path, expectedSha256: p.precondition?.content_sha256 }, actor, view);
}

export function deleteMemory(repo: MemoryRepo, storeId: string, id: string, expectedSha256: string | undefined, actor: Actor): Promise<{ id: string; type: 'memory_deleted' }> {
  if (expectedSha256 !== undefined && !Sha.safeParse(expectedSha256).success) throw new InvalidInputError('expected_content_sha256: must be 64 lowercase hexadecimal characters');
  return repo.deleteMemory(storeId, id, expectedSha256, actor);
}

export function listMemories(repo: MemoryRepo, storeId: string, q: MemoryListQuery): Promise<ListPage<Memory | MemoryPrefix>> {
  if (q.pathPrefix !== undefined) checkPathPrefix(q.pathPrefix);
  return repo.listMemories(storeId, q);
}

export function listVersions(repo: MemoryRepo, storeId: string, q: VersionListQuery): Promise<ListPage<MemoryVersion>> {
  return repo.listVersions(storeId, q);
}
