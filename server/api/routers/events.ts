import 'server-only';
import { TRPCError, tracked } from '@trpc/server';
import { z } from 'zod';
import { EventSliceInput, SendableEvent, SessionId } from '~/server/api/inputs';
import { createTRPCRouter, publicProcedure } from '~/server/api/trpc';
import { followWithDeltas } from '~/server/api/follow';

export const eventsRouter = createTRPCRouter({
  list: publicProcedure.input(EventSliceInput).query(({ ctx, input }) => {
    const { sessionId, ...slice } = input;
    return ctx.runtime.store.getEvents(sessionId, slice);
  }),

  send: publicProcedure.input(z.object({ sessionId: SessionId, event: SendableEvent })).mutation(async ({ ctx, input }) => {
    const stored = await ctx.runtime.store.emitEvent(input.sessionId, input.event);
    void ctx.runtime.harness.wake(input.sessionId);
    return stored;
  }),

  /**
   * Stored events (tracked by seq, so a reconnect resumes after the last one seen: no gap, no
   * duplicate) interleaved with untracked live deltas.
   */
  follow: publicProcedure
    .input(z.object({ sessionId: SessionId, afterSeq: z.number().int().min(0).default(0), lastEventId: z.string().regex(/^\d+$/).nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      if (!(await ctx.runtime.store.getSession(input.sessionId))) {
        // Thrown inside the stream, past the error-mapping middleware: use the tRPC code directly.
        throw new TRPCError({ code: 'NOT_FOUND', message: `session ${input.sessionId} not found` });
      }
      const after = input.lastEventId ? Number(input.lastEventId) : input.afterSeq;
      for await (const item of followWithDeltas(ctx.runtime, input.sessionId, after, signal ?? new AbortController().signal)) {
        if (item.kind === 'event') yield tracked(String(item.event.seq), item);
        else yield item;
      }
    }),
});
