import 'server-only';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';
import { actorFor, archiveStore, createMemory, createStore, deleteMemory, deleteStore, listMemories, listVersions, updateMemory, updateStore } from '~/server/commands/memory-commands';

const StoreId = z.string().regex(ID_PATTERN.memoryStore, 'must be a memory store id (memstore_…)');
const MemoryId = z.string().regex(ID_PATTERN.memory, 'must be a memory id (mem_…)');
const VersionId = z.string().regex(ID_PATTERN.memoryVersion, 'must be a memory version id (memver_…)');
const Page = z.string().min(1).max(500).optional();

/** The memory stores page: the owner's only (programs use /v1/memory_stores). Edits are versions by `user_actor` owner. */
export const memoryStoresRouter = createTRPCRouter({
  list: ownerProcedure
    .input(z.object({ includeArchived: z.boolean().default(false), page: Page }).default({ includeArchived: false }))
    .query(({ ctx, input }) => ctx.runtime.memory.listStores({ limit: 100, page: input.page, includeArchived: input.includeArchived })),
  get: ownerProcedure.input(z.object({ id: StoreId })).query(({ ctx, input }) => ctx.runtime.memory.getStore(input.id)),
  create: ownerProcedure.input(z.object({ name: z.string(), description: z.string().optional() })).mutation(({ ctx, input }) => createStore(ctx.runtime, input)),
  update: ownerProcedure
    .input(z.object({ id: StoreId, name: z.string().optional(), description: z.string().optional() }))
    .mutation(({ ctx, input }) => updateStore(ctx.runtime.memory, input.id, { name: input.name, description: input.description })),
  archive: ownerProcedure.input(z.object({ id: StoreId })).mutation(({ ctx, input }) => archiveStore(ctx.runtime, input.id)),
  delete: ownerProcedure.input(z.object({ id: StoreId })).mutation(({ ctx, input }) => deleteStore(ctx.runtime, input.id)),

  memories: ownerProcedure
    .input(z.object({ storeId: StoreId, pathPrefix: z.string().max(1024).optional(), depth: z.number().int().min(0).max(20).default(1), page: Page }))
    .query(({ ctx, input }) => listMemories(ctx.runtime.memory, input.storeId, { pathPrefix: input.pathPrefix, depth: input.depth, view: 'basic', limit: 100, page: input.page })),
  memory: ownerProcedure.input(z.object({ storeId: StoreId, id: MemoryId })).query(({ ctx, input }) => ctx.runtime.memory.getMemory(input.storeId, input.id, 'full')),
  createMemory: ownerProcedure
    .input(z.object({ storeId: StoreId, path: z.string(), content: z.string() }))
    .mutation(({ ctx, input }) => createMemory(ctx.runtime.memory, input.storeId, { path: input.path, content: input.content }, actorFor(ctx.caller), 'full')),
  updateMemory: ownerProcedure
    .input(z.object({ storeId: StoreId, id: MemoryId, content: z.string().optional(), path: z.string().optional(), expectedSha256: z.string().optional() }))
    .mutation(({ ctx, input }) =>
      updateMemory(
        ctx.runtime.memory,
        input.storeId,
        input.id,
        { content: input.content, path: input.path, ...(input.expectedSha256 ? { precondition: { type: 'content_sha256', content_sha256: input.expectedSha256 } } : {}) },
        actorFor(ctx.caller),
        'full',
      ),
    ),
  deleteMemory: ownerProcedure
    .input(z.object({ storeId: StoreId, id: MemoryId, expectedSha256: z.string().optional() }))
    .mutation(({ ctx, input }) => deleteMemory(ctx.runtime.memory, input.storeId, input.id, input.expectedSha256, actorFor(ctx.caller))),

  versions: ownerProcedure
    .input(z.object({ storeId: StoreId, memoryId: MemoryId.optional(), page: Page }))
    .query(({ ctx, input }) => listVersions(ctx.runtime.memory, input.storeId, { memoryId: input.memoryId, view: 'basic', limit: 100, page: input.page })),
  version: ownerProcedure.input(z.object({ storeId: StoreId, id: VersionId })).query(({ ctx, input }) => ctx.runtime.memory.getVersion(input.storeId, input.id, 'full')),
  redact: ownerProcedure.input(z.object({ storeId: StoreId, id: VersionId })).mutation(({ ctx, input }) => ctx.runtime.memory.redactVersion(input.storeId, input.id, actorFor(ctx.caller))),
});
