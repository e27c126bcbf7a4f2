import 'server-only';
import { Readable } from 'node:stream';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { addResource, listResources, removeResource } from '~/server/commands/resource-commands';
import { listFiles, uploadFile } from '~/server/commands/file-commands';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure } from '~/server/api/trpc';
import type { Runtime } from '~/server/runtime';

const FileId = z.string().regex(ID_PATTERN.file, 'must be a file id (file_…)');
const ResourceId = z.string().regex(ID_PATTERN.resource, 'must be a resource id (sesrsc_…)');

async function requireSession(rt: Runtime, id: string): Promise<void> {
  if (!(await rt.store.getSession(id))) throw new TRPCError({ code: 'NOT_FOUND', message: `session ${id} not found` });
}

/** The Files API's files as the UI shows them: the new-session form's picker, a session's uploads and outputs. */
export const filesRouter = createTRPCRouter({
  /** The newest files (not a session's outputs), for picking. */
  list: protectedProcedure.input(z.object({ limit: z.number().int().min(1).max(100).default(50) }).default({ limit: 50 })).query(async ({ ctx, input }) => {
    const page = await listFiles(ctx.runtime, { limit: input.limit });
    return page.data.filter((f) => f.scope === null);
  }),

  /** A session's uploads (its file resources, with each file's name and size) and the outputs collected from its hands. */
  ofSession: protectedProcedure.input(z.object({ sessionId: SessionId })).query(async ({ ctx, input }) => {
    await requireSession(ctx.runtime, input.sessionId);
    const resources = (await listResources(ctx.runtime, input.sessionId)).filter((r) => r.type === 'file');
    const uploads = await Promise.all(
      resources.map(async (r) => ({ ...r, file: await ctx.runtime.files.get(r.file_id).catch(() => null) })),
    );
    const outputs = (await listFiles(ctx.runtime, { limit: 100, scopeId: input.sessionId })).data;
    return { uploads, outputs };
  }),

  /**
   * A file from the owner's browser (the session page's "Add a file"), as base64 in the request:
   * so at most about three quarters of PADDOCK_MAX_BODY_BYTES; bigger files go through /v1/files.
   */
  upload: protectedProcedure
    .input(z.object({ filename: z.string().min(1).max(255), mimeType: z.string().max(255).regex(/^[\w.+-]+\/[\w.+-]+$/).or(z.literal('')), base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64') }))
    .mutation(async ({ ctx, input }) => {
      const bytes = Buffer.from(input.base64, 'base64');
      return uploadFile(ctx.runtime, { filename: input.filename, mimeType: input.mimeType || 'application/octet-stream', source: Readable.from([bytes]), maxBytes: ctx.runtime.config.PADDOCK_MAX_UPLOAD_BYTES, fields: Promise.resolve({}) });
    }),

  /** Mounts a file into a session (a running one's live hands get it at once). */
  addToSession: protectedProcedure
    .input(z.object({ sessionId: SessionId, fileId: FileId, mountPath: z.string().max(1024).optional() }))
    .mutation(async ({ ctx, input }) => {
      await requireSession(ctx.runtime, input.sessionId);
      return addResource(ctx.runtime, input.sessionId, { type: 'file', file_id: input.fileId, ...(input.mountPath ? { mount_path: input.mountPath } : {}) });
    }),

  removeFromSession: protectedProcedure.input(z.object({ sessionId: SessionId, resourceId: ResourceId })).mutation(async ({ ctx, input }) => {
    await requireSession(ctx.runtime, input.sessionId);
    return removeResource(ctx.runtime, input.sessionId, input.resourceId);
  }),
});
