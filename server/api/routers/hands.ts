import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { HandId, SessionId, TabId, TabResult, TabSecret, ToolUseId } from '~/server/api/inputs';
import { checkEventSize } from '~/server/commands/limits';
import { editHandFile, listHandFiles, readHandFile, transferHand, userScope } from '~/server/commands/hand-commands';
import { createTRPCRouter, ownerProcedure, protectedProcedure, sessionReadProcedure } from '~/server/api/trpc';
import { acceptTabResult } from '~/server/api/tab-result';
import { TAB_MEMORY_BATCH, TabMemoryChange, TabOutput, keepTabOutput, saveTabMemory, tabMountFile, tabMountManifest } from '~/server/api/tab-mounts';
import { memoryRefusalText } from '~/server/hands/hand-mounts';
import type { Runtime } from '~/server/runtime';

const FilePath = z.string().min(1).max(4096);

/** The tab's requests carry the secret attach gave it: no other caller can act as that tab. */
async function requireTab(rt: Runtime, input: { sessionId: string; hand: string; tabId: string; tabSecret: string }): Promise<void> {
  if (!(await rt.access.isTabSecret(input.sessionId, input.hand, input.tabId, input.tabSecret))) {
    throw new TRPCError({ code: 'FORBIDDEN', message: `tabSecret does not match tab ${input.tabId} of hand ${input.hand}: attach the tab again` });
  }
}

const TabRequest = z.object({ sessionId: SessionId, hand: HandId, tabId: TabId, tabSecret: TabSecret });

export const handsRouter = createTRPCRouter({
  /** Moves a ready hand, workspace and all, to another session; both logs record it. */
  transfer: protectedProcedure.input(z.object({ from: SessionId, hand: HandId, to: SessionId })).mutation(async ({ ctx, input }) => {
    const moved = await transferHand(ctx.runtime, input.from, input.hand, input.to);
    return { hand: moved.id, kind: moved.kind };
  }),

  /**
   * The owner's tab offers itself as the session's browser hand (or joins the one its other tabs
   * serve). The secret returned must come with the tab's heartbeats, claims and results.
   */
  attachBrowser: ownerProcedure
    .input(z.object({ sessionId: SessionId, tabId: TabId, engine: z.enum(['webcontainer', 'offline']) }))
    .mutation(async ({ ctx, input }) => {
      // An ended or archived session runs nothing more: a tab offered to it would be a hand for no one.
      const session = await ctx.runtime.store.getSession(input.sessionId);
      if (session?.status === 'terminated') throw new TRPCError({ code: 'CONFLICT', message: `session ${input.sessionId} has ended: a tab cannot be its hand` });
      if (session?.archived_at) throw new TRPCError({ code: 'CONFLICT', message: `session ${input.sessionId} is archived: a tab cannot be its hand` });
      const scope = await userScope(ctx.runtime, input.sessionId);
      const entry = await ctx.runtime.hands.attachBrowser(scope, input.tabId, input.engine);
      return { hand: entry.id, tabSecret: await ctx.runtime.access.tabSecret(input.sessionId, entry.id, input.tabId) };
    }),

  /** Keeps a tab's browser hand alive; `alive: false` means it was lost and the tab must attach again. */
  heartbeat: protectedProcedure.input(TabRequest).mutation(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    const hand = await ctx.runtime.hands.browserHand(await userScope(ctx.runtime, input.sessionId), input.hand);
    return { alive: (await hand?.heartbeat(input.tabId)) ?? false };
  }),

  /** A tab asks to run a call addressed to its browser hand; exactly one tab is granted each call. */
  claim: protectedProcedure.input(TabRequest.extend({ toolUseId: ToolUseId })).mutation(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    const hand = await ctx.runtime.hands.browserHand(await userScope(ctx.runtime, input.sessionId), input.hand);
    return { granted: (await hand?.claim(input.toolUseId, input.tabId)) ?? false };
  }),

  /**
   * The claiming tab's answer. Accepted only for a call addressed to this browser hand, claimed by
   * this tab, not yet answered; a retry of a stored answer returns it (the tab retries until then).
   */
  result: protectedProcedure.input(TabResult).mutation(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    const refused = input.memoryRefused ?? [];
    // A refused change to memory fails the call, as on every hand kind (hand-mounts.ts), keeping what the command printed.
    const event =
      refused.length > 0
        ? { type: 'user.tool_result' as const, tool_use_id: input.toolUseId, content: [{ type: 'text' as const, text: memoryRefusalText(textOf(input.content), refused) }], is_error: true }
        : { type: 'user.tool_result' as const, tool_use_id: input.toolUseId, content: input.content, ...(input.is_error ? { is_error: true } : {}) };
    checkEventSize(ctx.runtime.config, event);
    const stored = await acceptTabResult(ctx.runtime, { sessionId: input.sessionId, hand: input.hand, tabId: input.tabId, event });
    void ctx.runtime.harness.wake(input.sessionId);
    return stored;
  }),

  /** The session's mounts for the call this tab holds (path, version, read-only, size): the tab places what it lacks before running it. */
  mounts: protectedProcedure.input(TabRequest.extend({ toolUseId: ToolUseId })).query(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    return tabMountManifest(ctx.runtime, input);
  }),

  /** One mount's bytes (base64, at most 16 MB) for the call this tab holds. */
  mountFile: protectedProcedure.input(TabRequest.extend({ toolUseId: ToolUseId, path: FilePath })).query(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    return tabMountFile(ctx.runtime, input);
  }),

  /** A file the call left under /mnt/session/outputs/ (new or changed): kept as a file scoped to the session. */
  keepOutput: protectedProcedure.input(TabRequest.extend({ toolUseId: ToolUseId }).merge(TabOutput)).mutation(async ({ ctx, input }) => {
    await requireTab(ctx.runtime, input);
    return keepTabOutput(ctx.runtime, input);
  }),

  /** What the call changed under /mnt/memory/: versions by the session; the refused ones come back, for the result to name. */
  saveMemory: protectedProcedure
    .input(TabRequest.extend({ toolUseId: ToolUseId, changes: z.array(TabMemoryChange).min(1).max(TAB_MEMORY_BATCH) }))
    .mutation(async ({ ctx, input }) => {
      await requireTab(ctx.runtime, input);
      return saveTabMemory(ctx.runtime, input);
    }),

  /** The files in a server-side hand's workspace, for the IDE's file tree (a share link's viewer: of a live hand only). */
  listFiles: sessionReadProcedure('sessionId')
    .input(z.object({ sessionId: SessionId, hand: HandId }))
    .query(async ({ ctx, input }) => ({ files: await listHandFiles(ctx.runtime, ctx.caller, input.sessionId, input.hand) })),

  readFile: sessionReadProcedure('sessionId')
    .input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath }))
    .query(async ({ ctx, input }) => ({ content: await readHandFile(ctx.runtime, ctx.caller, input.sessionId, input.hand, input.path) })),

  /** A user's edit from the IDE: written to the hand, and recorded so the brain sees it. */
  writeFile: protectedProcedure
    .input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath, content: z.string() }))
    .mutation(({ ctx, input }) => editHandFile(ctx.runtime, input.sessionId, input.hand, input.path, input.content)),
});

/** A result's text (null: none), as the command printed it. */
function textOf(content: readonly { type: string; text?: string }[]): string | null {
  const texts = content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : []));
  return texts.length > 0 ? texts.join('\n') : null;
}
