import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';

/** Programs' keys, managed by the signed-in owner only (a program's key cannot mint or revoke keys). */
export const apiKeysRouter = createTRPCRouter({
  list: ownerProcedure.query(({ ctx }) => ctx.runtime.access.listApiKeys()),

  /** The key is in this answer and nowhere else, ever: only its hash is stored. */
  create: ownerProcedure
    .input(z.object({ name: z.string().trim().min(1, 'name: give the key a name').max(100) }))
    .mutation(({ ctx, input }) => ctx.runtime.access.createApiKey(input.name)),

  revoke: ownerProcedure.input(z.object({ id: z.string().regex(ID_PATTERN.apiKey, 'must be an API key id (apik_…)') })).mutation(async ({ ctx, input }) => {
    if (!(await ctx.runtime.access.revokeApiKey(input.id))) throw new TRPCError({ code: 'NOT_FOUND', message: `API key ${input.id} not found (or already revoked)` });
    return { revoked: input.id };
  }),
});
