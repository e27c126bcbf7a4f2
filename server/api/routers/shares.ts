import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';

/** Longest a link may live: a year. */
const MAX_EXPIRY_HOURS = 24 * 366;
const ShareId = z.string().regex(ID_PATTERN.share, 'must be a share link id (shr_…)');

/**
 * The owner's read-only links to a session (`/share/<token>`). Only the owner makes them (never a
 * program's key: a leaked key cannot hand out sessions); the token is answered once, at creation.
 */
export const sharesRouter = createTRPCRouter({
  list: ownerProcedure.input(z.object({ sessionId: SessionId })).query(({ ctx, input }) => ctx.runtime.access.shares.list(input.sessionId)),

  create: ownerProcedure
    .input(
      z.object({
        sessionId: SessionId,
        label: z.string().trim().max(100).default(''),
        /** Hours from now; absent or null: the link lasts until revoked. */
        expiresInHours: z.number().positive().max(MAX_EXPIRY_HOURS).nullish(),
        /** The viewer sees the conversation, terminal and timeline, not the hands' files. */
        hideFiles: z.boolean().default(false),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const expiresAt = input.expiresInHours ? Date.now() + Math.round(input.expiresInHours * 3_600_000) : null;
      const { token, link } = await ctx.runtime.access.shares.create(input.sessionId, { label: input.label, expiresAt, hideFiles: input.hideFiles });
      return { ...link, token, path: `/share/${token}` };
    }),

  /** A revoked link answers 404 at once, and a page open on it stops receiving events within seconds. */
  revoke: ownerProcedure.input(z.object({ sessionId: SessionId, id: ShareId })).mutation(async ({ ctx, input }) => {
    if (!(await ctx.runtime.access.shares.revoke(input.sessionId, input.id))) throw new TRPCError({ code: 'NOT_FOUND', message: `share link ${input.id} not found` });
    return { id: input.id, revoked: true as const };
  }),
});
