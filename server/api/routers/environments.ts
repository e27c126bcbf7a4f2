import 'server-only';
import { z } from 'zod';
import { EnvironmentCreateParams, type EnvironmentSupport, EnvironmentUpdateParams } from '~/lib/agent';
import { EnvironmentId, PageCursor } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure } from '~/server/api/trpc';

/** Environments: where a session's hands run (networking, packages). The default one always exists. */
export const environmentsRouter = createTRPCRouter({
  list: protectedProcedure
    .input(z.object({ limit: z.number().int().min(1).max(100).default(50), page: PageCursor, includeArchived: z.boolean().default(false) }).default({ limit: 50, includeArchived: false }))
    .query(({ ctx, input }) => ctx.runtime.agents.listEnvironments({ limit: input.limit, page: input.page ?? null, includeArchived: input.includeArchived })),

  /** What this server lets an environment have (the new-session picker greys out the rest). */
  support: protectedProcedure.query(({ ctx }): EnvironmentSupport => ({ allowUnrestrictedNetwork: ctx.runtime.config.PADDOCK_ALLOW_UNRESTRICTED_NETWORK })),

  get: protectedProcedure.input(z.object({ id: EnvironmentId })).query(({ ctx, input }) => ctx.runtime.agents.getEnvironment(input.id)),

  create: protectedProcedure.input(EnvironmentCreateParams).mutation(({ ctx, input }) => ctx.runtime.agents.createEnvironment(input)),

  update: protectedProcedure.input(EnvironmentUpdateParams.extend({ id: EnvironmentId })).mutation(({ ctx, input }) => {
    const { id, ...params } = input;
    return ctx.runtime.agents.updateEnvironment(id, params);
  }),

  archive: protectedProcedure.input(z.object({ id: EnvironmentId })).mutation(({ ctx, input }) => {
    // A session made without naming an environment gets the default one: it has to stay usable.
    return ctx.runtime.agents.archiveEnvironment(input.id);
  }),

  /** The store refuses the default (CONFLICT); sessions keep the id of a deleted one. */
  delete: protectedProcedure.input(z.object({ id: EnvironmentId })).mutation(({ ctx, input }) => ctx.runtime.agents.deleteEnvironment(input.id)),
});
