import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { ToolError } from '~/lib/hand';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, publicProcedure } from '~/server/api/trpc';
import type { HandScope } from '~/server/hands/registry';
import type { Runtime } from '~/server/runtime';

/** A user-initiated hand change: no lease fence (it is not the brain writing), idempotent keys. */
async function userScope(rt: Runtime, sessionId: string): Promise<HandScope> {
  if (!(await rt.store.getSession(sessionId))) throw new TRPCError({ code: 'NOT_FOUND', message: `session ${sessionId} not found` });
  return { sessionId, signal: new AbortController().signal, emit: (event, key) => rt.store.emitEvent(sessionId, event, { idempotencyKey: key }) };
}

function asBadRequest(e: unknown): never {
  if (e instanceof ToolError) throw new TRPCError({ code: 'BAD_REQUEST', message: e.message });
  throw e;
}

export const handsRouter = createTRPCRouter({
  /** Moves a ready hand, workspace and all, to another session; both logs record it. */
  transfer: publicProcedure
    .input(z.object({ from: SessionId, hand: z.string().min(1).max(100), to: SessionId }))
    .mutation(async ({ ctx, input }) => {
      if (input.from === input.to) throw new TRPCError({ code: 'BAD_REQUEST', message: 'to: must be another session' });
      const [from, to] = await Promise.all([userScope(ctx.runtime, input.from), userScope(ctx.runtime, input.to)]);
      const moved = await ctx.runtime.hands.transfer(from, input.hand, to).catch(asBadRequest);
      return { hand: moved.id, kind: moved.kind };
    }),
});
