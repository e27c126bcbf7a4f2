import 'server-only';
import { tracked } from '@trpc/server';
import { z } from 'zod';
import { EventSliceInput, SendableEvent, SessionId } from '~/server/api/inputs';
import { createTRPCRouter, domainToTRPC, protectedProcedure, sessionReadProcedure } from '~/server/api/trpc';
import { SHARE_RECHECK_MS, watchShare } from '~/server/api/share-watch';
import { visitorDelta, visitorEvent, widgetAllows } from '~/lib/widget';
import { isDomainError } from '~/lib/errors';
import { followWithDeltas } from '~/server/api/follow';
import { sendEvents } from '~/server/commands/session-commands';

export const eventsRouter = createTRPCRouter({
  list: sessionReadProcedure('sessionId', { visitors: true }).input(EventSliceInput).query(async ({ ctx, input }) => {
    const { sessionId, ...slice } = input;
    const events = await ctx.runtime.store.getEvents(sessionId, slice);
    const caller = ctx.caller;
    if (caller.kind !== 'visitor') return events;
    // A widget that hides its tools sends its visitors none of their names (not just hides them).
    const show = (await ctx.runtime.access.widgets.store.settings(caller.agentId))?.show_tool_names ?? false;
    return events.map((e) => visitorEvent(e, show));
  }),

  send: protectedProcedure
    .input(
      z.object({
        sessionId: SessionId,
        event: SendableEvent,
        /** The same key again returns the first stored event: a client retrying a send whose answer it lost stores it once. */
        idempotencyKey: z.string().min(8).max(100).regex(/^[\w-]+$/, 'must be letters, digits, _ or -').optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const [stored] = await sendEvents(ctx.runtime, input.sessionId, [input.event], { where: () => 'event', ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}) });
      return stored!;
    }),

  /**
   * Stored events (tracked by seq, so a reconnect resumes after the last one seen: no gap, no
   * duplicate) interleaved with untracked live deltas. A share link's viewer follows while its
   * link lives: the row is read again every few seconds (any instance may have revoked it), and
   * the stream ends with a NOT_FOUND once it is revoked or expired.
   */
  follow: sessionReadProcedure('sessionId', { visitors: true })
    .input(z.object({ sessionId: SessionId, afterSeq: z.number().int().min(0).default(0), lastEventId: z.string().regex(/^\d+$/).nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      // Errors thrown inside the stream pass no middleware: domain errors (an unknown session's
      // NotFoundError first of all) are mapped here. An unreachable store is reported in the
      // stream and retried by followWithDeltas, never thrown.
      const outer = signal ?? new AbortController().signal;
      const caller = ctx.caller;
      // A widget's visitor follows while its agent's widget stays on for its origin (any instance may turn it off).
      // A visitor's tool names follow the owner's setting as it is read at each of those checks.
      let showTools = caller.kind !== 'visitor' || ((await ctx.runtime.access.widgets.store.settings(caller.agentId))?.show_tool_names ?? false);
      const visitorLive = async (agentId: string, origin: string) => {
        const settings = await ctx.runtime.access.widgets.store.settings(agentId);
        showTools = settings?.show_tool_names ?? false;
        return widgetAllows(settings, origin);
      };
      const share =
        caller.kind === 'viewer'
          ? watchShare(ctx.runtime.access.shares, caller.shareId, outer)
          : caller.kind === 'visitor'
            ? watchShare({ isLive: () => visitorLive(caller.agentId, caller.origin) }, caller.agentId, outer, SHARE_RECHECK_MS, 'this widget was turned off for this site')
            : null;
      try {
        const after = input.lastEventId ? Number(input.lastEventId) : input.afterSeq;
        for await (const item of followWithDeltas(ctx.runtime, input.sessionId, after, share?.signal ?? outer)) {
          if (item.kind === 'event') yield tracked(String(item.event.seq), { ...item, event: visitorEvent(item.event, showTools) });
          else if (item.kind === 'delta') {
            const delta = visitorDelta(item.delta, showTools);
            if (delta) yield { ...item, delta };
          } else yield item;
        }
      } catch (e) {
        if (isDomainError(e)) throw domainToTRPC(e);
        throw e;
      } finally {
        share?.close();
      }
      const dead = share?.ended();
      if (dead) throw dead;
    }),
});
