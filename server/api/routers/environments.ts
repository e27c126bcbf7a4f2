import 'server-only';
import { z } from 'zod';
import { EnvironmentCreateParams, type EnvironmentSupport, EnvironmentUpdateParams } from '~/lib/agent';
import { EnvironmentId, PageCursor } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure } from '~/server/api/trpc';
import { archiveEnvironment, createEnvironment, deleteEnvironment, updateEnvironment } from '~/server/commands/agent-commands';

/** Environments: where a session's hands run (networking, packages). The default one always exists. */
export const environmentsRouter = createTRPCRouter({
  list: protectedProcedure
    .input(z.object({ limit: z.number().int().min(1).max(100).default(50), page: PageCursor, includeArchived: z.boolean().default(false) }).default({ limit: 50, includeArchived: false }))
    .query(({ ctx, input }) => ctx.runtime.agents.listEnvironments({ limit: input.limit, page: input.page ?? null, includeArchived: input.includeArchived })),

  /** What this server lets an environment have (the new-session picker greys out the rest). */
  support: protectedProcedure.query(({ ctx }): EnvironmentSupport => ({ allowUnrestrictedNetwork: ctx.runtime.config.PADDOCK_ALLOW_UNRESTRICTED_NETWORK })),

  get: protectedProcedure.input(z.object({ id: EnvironmentId })).query(({ ctx, input }) => ctx.runtime.agents.getEnvironment(input.id)),

  create: protectedProcedure.input(EnvironmentCreateParams).mutation(({ ctx, input }) => createEnvironment(ctx.runtime, input)),

  update: protectedProcedure.input(EnvironmentUpdateParams.extend({ id: EnvironmentId })).mutation(({ ctx, input }) => {
    const { id, ...params } = input;
    return updateEnvironment(ctx.runtime, id, params);
  }),

  archive: protectedProcedure.input(z.object({ id: EnvironmentId })).mutation(({ ctx, input }) => {
    // A session made without naming an environment gets the default one: it has to stay usable.
    return archiveEnvironment(ctx.runtime, input.id);
  }),

  /** A self-hosted environment's keys, queue and items (its page; null for a cloud one). */
  selfHosted: protectedProcedure.input(z.object({ id: EnvironmentId })).query(async ({ ctx, input }) => {
    const env = await ctx.runtime.agents.getEnvironment(input.id);
    if (env.config.type !== 'self_hosted') return null;
    const work = ctx.runtime.work;
    const [keys, stats, items] = await Promise.all([work.listKeys(env.id), work.stats(env.id), work.list(env.id, { limit: '20' })]);
    return { keys: keys.data, stats, items: items.data };
  }),

  /** A new key for a self-hosted environment: the key itself is in this answer only. */
  createKey: protectedProcedure.input(z.object({ id: EnvironmentId, name: z.string().trim().min(1).max(256) })).mutation(({ ctx, input }) => ctx.runtime.work.createKey(input.id, { name: input.name })),

  /** Asks a worker to answer: a healthcheck item, which the next worker to poll claims and stops. */
  checkWorkers: protectedProcedure.input(z.object({ id: EnvironmentId })).mutation(({ ctx, input }) => ctx.runtime.work.healthcheck(input.id)),

  revokeKey: protectedProcedure.input(z.object({ id: EnvironmentId, keyId: z.string().min(1).max(100) })).mutation(({ ctx, input }) => ctx.runtime.work.revokeKey(input.id, input.keyId)),

  /** The store refuses the default (CONFLICT); sessions keep the id of a deleted one. */
  delete: protectedProcedure.input(z.object({ id: EnvironmentId })).mutation(({ ctx, input }) => deleteEnvironment(ctx.runtime, input.id)),
});
