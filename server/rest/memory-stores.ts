import 'server-only';
import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';
import { ID_PATTERN } from '~/lib/ids';
import { actorFor, archiveStore, createMemory, createStore, deleteMemory, deleteStore, listMemories, listVersions, updateMemory, updateStore } from '~/server/commands/memory-commands';
import { Bool, CommonQuery, CreatedAtQuery, Limit, Page, createdAtRange, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

/**
 * /v1/memory_stores (beta `agent-memory-2026-07-22`; like every beta here, the header is accepted
 * and not required). Writes name the calling API key in the versions they make. A self-hosted
 * worker's item token reads its session's stores and writes its read-write ones, as the session.
 */
const View = z.enum(['basic', 'full']);
const ViewQuery = z.object({ view: View.optional(), ...CommonQuery }).strict();
const StoreListQuery = z.object({ limit: Limit(100, 20), page: Page, include_archived: Bool.optional(), ...CreatedAtQuery, ...CommonQuery }).strict();
const MemoryListQuery = z.object({ limit: Limit(100, 20), page: Page, path_prefix: z.string().max(1024).optional(), depth: z.coerce.number().int().min(0).max(20).optional(), view: View.optional(), ...CommonQuery }).strict();
const DeleteQuery = z.object({ expected_content_sha256: z.string().optional(), ...CommonQuery }).strict();
const VersionListQuery = z
  .object({
    limit: Limit(100, 20),
    page: Page,
    memory_id: z.string().max(64).optional(),
    operation: z.enum(['created', 'modified', 'deleted']).optional(),
    session_id: z.string().max(64).optional(),
    api_key_id: z.string().max(64).optional(),
    service_account_id: z.string().max(64).optional(),
    view: View.optional(),
    ...CreatedAtQuery,
    ...CommonQuery,
  })
  .strict();

function idOf(params: Record<string, string>, key: string, pattern: RegExp, what: string): string {
  const v = params[key] ?? '';
  if (!pattern.test(v)) throw new InvalidInputError(`${what}: ${JSON.stringify(v.slice(0, 80))} must be a ${what.replace(/_id$/, '').replace('_', ' ')} id`);
  return v;
}
const storeId = (p: Record<string, string>) => idOf(p, 'id', ID_PATTERN.memoryStore, 'memory_store_id');
const memoryId = (p: Record<string, string>) => idOf(p, 'mid', ID_PATTERN.memory, 'memory_id');
const versionId = (p: Record<string, string>) => idOf(p, 'vid', ID_PATTERN.memoryVersion, 'memory_version_id');
const view = (query: URLSearchParams) => parseInput(ViewQuery, queryObject(query), 'query').view;

export const memoryStoreRoutes: Route[] = [
  { method: 'POST', path: 'memory_stores', handler: ({ rt, body }: RestRequest) => createStore(rt, body) },
  {
    method: 'GET',
    path: 'memory_stores',
    handler: ({ rt, query }: RestRequest) => {
      const q = parseInput(StoreListQuery, queryObject(query), 'query');
      return rt.memory.listStores({ limit: q.limit, page: q.page, includeArchived: q.include_archived ?? false, createdAt: createdAtRange(q) });
    },
  },
  { method: 'GET', path: 'memory_stores/:id', callers: { workItem: 'session_memory' }, handler: ({ rt, params }: RestRequest) => rt.memory.getStore(storeId(params)) },
  { method: 'POST', path: 'memory_stores/:id', handler: ({ rt, params, body }: RestRequest) => updateStore(rt.memory, storeId(params), body) },
  { method: 'DELETE', path: 'memory_stores/:id', handler: ({ rt, params }: RestRequest) => deleteStore(rt, storeId(params)) },
  { method: 'POST', path: 'memory_stores/:id/archive', handler: ({ rt, params }: RestRequest) => archiveStore(rt, storeId(params)) },

  { method: 'POST', path: 'memory_stores/:id/memories', callers: { workItem: 'session_memory_write' }, handler: ({ rt, params, body, query, caller }: RestRequest) => createMemory(rt.memory, storeId(params), body, actorFor(caller), view(query)) },
  {
    method: 'GET',
    path: 'memory_stores/:id/memories',
    callers: { workItem: 'session_memory' },
    handler: ({ rt, params, query }: RestRequest) => {
      const q = parseInput(MemoryListQuery, queryObject(query), 'query');
      return listMemories(rt.memory, storeId(params), { pathPrefix: q.path_prefix, depth: q.depth, view: q.view ?? 'basic', limit: q.limit, page: q.page });
    },
  },
  { method: 'GET', path: 'memory_stores/:id/memories/:mid', callers: { workItem: 'session_memory' }, handler: ({ rt, params, query }: RestRequest) => rt.memory.getMemory(storeId(params), memoryId(params), view(query) ?? 'full') },
  { method: 'POST', path: 'memory_stores/:id/memories/:mid', callers: { workItem: 'session_memory_write' }, handler: ({ rt, params, body, query, caller }: RestRequest) => updateMemory(rt.memory, storeId(params), memoryId(params), body, actorFor(caller), view(query)) },
  {
    method: 'DELETE',
    path: 'memory_stores/:id/memories/:mid',
    callers: { workItem: 'session_memory_write' },
    handler: ({ rt, params, query, caller }: RestRequest) => {
      const q = parseInput(DeleteQuery, queryObject(query), 'query');
      return deleteMemory(rt.memory, storeId(params), memoryId(params), q.expected_content_sha256, actorFor(caller));
    },
  },

  {
    method: 'GET',
    path: 'memory_stores/:id/memory_versions',
    handler: ({ rt, params, query }: RestRequest) => {
      const q = parseInput(VersionListQuery, queryObject(query), 'query');
      // No service accounts here: a filter by one matches nothing.
      if (q.service_account_id !== undefined) return Promise.resolve({ data: [], next_page: null });
      return listVersions(rt.memory, storeId(params), { memoryId: q.memory_id, operation: q.operation, sessionId: q.session_id, apiKeyId: q.api_key_id, createdAt: createdAtRange(q), view: q.view ?? 'basic', limit: q.limit, page: q.page });
    },
  },
  { method: 'GET', path: 'memory_stores/:id/memory_versions/:vid', handler: ({ rt, params, query }: RestRequest) => rt.memory.getVersion(storeId(params), versionId(params), view(query) ?? 'full') },
  { method: 'POST', path: 'memory_stores/:id/memory_versions/:vid/redact', handler: ({ rt, params, caller }: RestRequest) => rt.memory.redactVersion(storeId(params), versionId(params), actorFor(caller)) },
];
