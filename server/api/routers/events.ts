import 'server-only';
import { tracked } from '@trpc/server';
import { z } from 'zod';
import { EventSliceInput, SendableEvent, SessionId } from '~/server/api/inputs';
import { createTRPCRouter, domainToTRPC, protectedProcedure, sessionReadProcedure } from '~/server/api/trpc';
import { SHARE_RECHECK_MS, watchShare } from '~/server/api/share-watch';
import { widgetAllows } from '~/lib/widget';
import { isDomainError } from '~/lib/errors';
import { errorFields, logger } from '~/server/log';
import type { StoredEvent } from '~/lib/events';
import { DEFAULT_TITLE, type SessionStore } from '~/server/session/store';
import { refuseTerminated } from '~/server/session/terminated';
import { followWithDeltas } from '~/server/api/follow';
import { checkEventSize, checkFileWrite } from '~/server/api/limits';
import { checkAnswers, storedAnswerWon } from '~/server/agents/answers';

const log = logger('events');

/**
 * An untitled session is named after its first message, as people expect from chat apps, whatever
 * came before it in the log (a browser hand attached, a file edited).
 */
export async function autoTitle(store: SessionStore, id: string, message: StoredEvent & { type: 'user.message' }): Promise<void> {
  const session = await store.getSession(id);
  const text = message.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ').replace(/\s+/g, ' ').trim();
  if (!session || session.title !== DEFAULT_TITLE || text === '') return;
  const [first] = await store.getEvents(id, { types: ['user.message'], limit: 1 });
  if (first?.id !== message.id) return;
  await store.updateSession(id, { title: text.length > 60 ? `${text.slice(0, 57)}…` : text });
}

export const eventsRouter = createTRPCRouter({
  list: sessionReadProcedure('sessionId', { visitors: true }).input(EventSliceInput).query(({ ctx, input }) => {
    const { sessionId, ...slice } = input;
    return ctx.runtime.store.getEvents(sessionId, slice);
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
      checkEventSize(ctx.runtime.config, input.event);
      // Final (the store refuses it too, should the session end between this read and the append).
      await refuseTerminated(ctx.runtime.store, input.sessionId);
      if (input.event.type === 'user.file_edit') checkFileWrite(ctx.runtime.config, input.event.content);
      // An answer (a verdict on a call that asks) is keyed by its call: one verdict, whoever races.
      const answerKey = await checkAnswers(ctx.runtime.store, input.sessionId, [input.event], () => 'event');
      const key = answerKey ?? (input.idempotencyKey ? `send:${input.idempotencyKey}` : undefined);
      const stored = await ctx.runtime.store.emitEvent(input.sessionId, input.event, key ? { idempotencyKey: key } : {});
      storedAnswerWon([input.event], [stored]);
      void ctx.runtime.harness.wake(input.sessionId);
      if (stored.type === 'user.message') {
        // Best effort: the message is stored, so the send must succeed even if naming fails (a
        // failed send would make the user send it again).
        await autoTitle(ctx.runtime.store, input.sessionId, stored).catch((e: unknown) => log.warn('auto-title failed', { session: input.sessionId, ...errorFields(e) }));
      }
      return stored;
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
      const share =
        caller.kind === 'viewer'
          ? watchShare(ctx.runtime.access.shares, caller.shareId, outer)
          : caller.kind === 'visitor'
            ? watchShare({ isLive: async () => widgetAllows(await ctx.runtime.access.widgets.store.settings(caller.agentId), caller.origin) }, caller.agentId, outer, SHARE_RECHECK_MS, 'this widget was turned off for this site')
            : null;
      try {
        const after = input.lastEventId ? Number(input.lastEventId) : input.afterSeq;
        for await (const item of followWithDeltas(ctx.runtime, input.sessionId, after, share?.signal ?? outer)) {
          if (item.kind === 'event') yield tracked(String(item.event.seq), item);
          else yield item;
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
