import 'server-only';
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { ToolError } from '~/lib/hand';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, publicProcedure } from '~/server/api/trpc';
import type { HandScope } from '~/server/hands/registry';
import type { Runtime } from '~/server/runtime';

const TabId = z.string().min(8).max(64).regex(/^[\w-]+$/, 'must be a tab id');
const HandId = z.string().min(1).max(100);
const FilePath = z.string().min(1).max(4096);

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

  /** A tab offers itself as the session's browser hand (or joins the one its other tabs serve). */
  attachBrowser: publicProcedure
    .input(z.object({ sessionId: SessionId, tabId: TabId, engine: z.enum(['webcontainer', 'offline']) }))
    .mutation(async ({ ctx, input }) => {
      const scope = await userScope(ctx.runtime, input.sessionId);
      const entry = await ctx.runtime.hands.attachBrowser(scope, input.tabId, input.engine);
      return { hand: entry.id };
    }),

  /** Keeps a tab's browser hand alive; `alive: false` means it was lost and the tab must attach again. */
  heartbeat: publicProcedure.input(z.object({ sessionId: SessionId, hand: HandId, tabId: TabId })).mutation(async ({ ctx, input }) => {
    const hand = await ctx.runtime.hands.browserHand(await userScope(ctx.runtime, input.sessionId), input.hand);
    return { alive: (await hand?.heartbeat(input.tabId)) ?? false };
  }),

  /** A tab asks to run a call addressed to its browser hand; exactly one tab is granted each call. */
  claim: publicProcedure
    .input(z.object({ sessionId: SessionId, hand: HandId, tabId: TabId, toolUseId: z.string().regex(/^sevt_/, 'must be an event id (sevt_…)') }))
    .mutation(async ({ ctx, input }) => {
      const hand = await ctx.runtime.hands.browserHand(await userScope(ctx.runtime, input.sessionId), input.hand);
      return { granted: (await hand?.claim(input.toolUseId, input.tabId)) ?? false };
    }),

  /** The files in a server-side hand's workspace, for the IDE's file tree. */
  listFiles: publicProcedure.input(z.object({ sessionId: SessionId, hand: HandId })).query(async ({ ctx, input }) => {
    const text = await runOnHand(ctx.runtime, input.sessionId, input.hand, 'glob', { pattern: '**/*' });
    // glob answers one path per line, or a sentence when nothing matches / the list was capped.
    return { files: text.split('\n').filter((l) => l.length > 0 && !/^(no files match|\[)/.test(l)) };
  }),

  readFile: publicProcedure.input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath })).query(async ({ ctx, input }) => ({
    content: await runOnHand(ctx.runtime, input.sessionId, input.hand, 'read', { path: input.path }),
  })),

  /** A user's edit from the IDE: written to the hand, and recorded so the brain sees it. */
  writeFile: publicProcedure
    .input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath, content: z.string().max(256 * 1024) }))
    .mutation(async ({ ctx, input }) => {
      await runOnHand(ctx.runtime, input.sessionId, input.hand, 'write', { path: input.path, content: input.content });
      return ctx.runtime.store.emitEvent(input.sessionId, { type: 'user.file_edit', hand: input.hand, path: input.path, content: input.content });
    }),
});

/** Runs a file tool on a server-side hand for the IDE (never the brain's calls). */
async function runOnHand(rt: Runtime, sessionId: string, handId: string, tool: 'glob' | 'read' | 'write', input: Record<string, unknown>): Promise<string> {
  const scope = await userScope(rt, sessionId);
  const entry = await rt.hands.resolve(scope, handId).catch(asBadRequest);
  if (entry.kind === 'browser' || !entry.hand) throw new TRPCError({ code: 'BAD_REQUEST', message: `hand ${handId} lives in a browser tab: read it there` });
  // Through `use`: the user's reads count as use (an idle hand is not suspended under them).
  return rt.hands.use(scope, entry, (hand) => hand.execute(tool, input, { callId: `ide-${randomUUID()}`, signal: AbortSignal.timeout(30_000) })).catch(asBadRequest);
}
