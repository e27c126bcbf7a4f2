import 'server-only';
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { HandId, SessionId, TabId, TabResult, TabSecret, ToolUseId } from '~/server/api/inputs';
import { checkEventSize, checkFileWrite } from '~/server/commands/limits';
import { handsInLog } from '~/lib/hand-log';
import type { Caller } from '~/server/access/access';
import { createTRPCRouter, ownerProcedure, protectedProcedure, sessionReadProcedure } from '~/server/api/trpc';
import { acceptTabResult } from '~/server/api/tab-result';
import type { HandScope } from '~/server/hands/registry';
import type { Runtime } from '~/server/runtime';
import { refuseTerminated } from '~/server/session/terminated';

const FilePath = z.string().min(1).max(4096);

/** A user-initiated hand change: no lease fence (it is not the brain writing), idempotent keys. */
async function userScope(rt: Runtime, sessionId: string): Promise<HandScope> {
  if (!(await rt.store.getSession(sessionId))) throw new TRPCError({ code: 'NOT_FOUND', message: `session ${sessionId} not found` });
  return { sessionId, signal: new AbortController().signal, emit: (event, key) => rt.store.emitEvent(sessionId, event, { idempotencyKey: key }) };
}

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
    if (input.from === input.to) throw new TRPCError({ code: 'BAD_REQUEST', message: 'to: must be another session' });
    const [from, to] = await Promise.all([userScope(ctx.runtime, input.from), userScope(ctx.runtime, input.to)]);
    const moved = await ctx.runtime.hands.transfer(from, input.hand, to);
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
    const event = { type: 'user.tool_result' as const, tool_use_id: input.toolUseId, content: input.content, ...(input.is_error ? { is_error: true } : {}) };
    checkEventSize(ctx.runtime.config, event);
    const stored = await acceptTabResult(ctx.runtime, { sessionId: input.sessionId, hand: input.hand, tabId: input.tabId, event });
    void ctx.runtime.harness.wake(input.sessionId);
    return stored;
  }),

  /** The files in a server-side hand's workspace, for the IDE's file tree (a share link's viewer: of a live hand only). */
  listFiles: sessionReadProcedure('sessionId').input(z.object({ sessionId: SessionId, hand: HandId })).query(async ({ ctx, input }) => {
    const text = await readOnHand(ctx.runtime, ctx.caller, input.sessionId, input.hand, 'glob', { pattern: '**/*' });
    // glob answers one path per line, or a sentence when nothing matches / the list was capped.
    return { files: text.split('\n').filter((l) => l.length > 0 && !/^(no files match|\[)/.test(l)) };
  }),

  readFile: sessionReadProcedure('sessionId')
    .input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath }))
    .query(async ({ ctx, input }) => ({
      content: await readOnHand(ctx.runtime, ctx.caller, input.sessionId, input.hand, 'read', { file_path: input.path }),
    })),

  /** A user's edit from the IDE: written to the hand, and recorded so the brain sees it. */
  writeFile: protectedProcedure.input(z.object({ sessionId: SessionId, hand: HandId, path: FilePath, content: z.string() })).mutation(async ({ ctx, input }) => {
    checkFileWrite(ctx.runtime.config, input.content);
    // Before the write: the edit's event would be refused after it, leaving the file changed unrecorded.
    await refuseTerminated(ctx.runtime.store, input.sessionId);
    await runOnHand(ctx.runtime, input.sessionId, input.hand, 'write', { file_path: input.path, content: input.content });
    return ctx.runtime.store.emitEvent(input.sessionId, { type: 'user.file_edit', hand: input.hand, path: input.path, content: input.content });
  }),
});

/**
 * An IDE read. The owner's may resume a suspended hand (as any use does); a share link's viewer
 * changes nothing: it reads only a hand that is running now (never resumed, provisioned or
 * counted as use), and nothing when the owner hid the files from the link.
 */
async function readOnHand(rt: Runtime, caller: Caller, sessionId: string, handId: string, tool: 'glob' | 'read', input: Record<string, unknown>): Promise<string> {
  if (caller.kind !== 'viewer') return runOnHand(rt, sessionId, handId, tool, input);
  if (caller.hideFiles) throw new TRPCError({ code: 'FORBIDDEN', message: "the owner does not share the hands' files through this link" });
  const record = handsInLog(await rt.store.getEvents(sessionId, { types: ['hand.provisioned', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed'] })).find((h) => h.id === handId);
  if (!record || record.kind === 'browser' || record.status !== 'ready' || record.suspended) throw new TRPCError({ code: 'PRECONDITION_FAILED', message: `no hand is live: ${handId}'s files can be read while it runs` });
  const entry = await rt.hands.resolve(await userScope(rt, sessionId), handId);
  if (entry.status !== 'ready' || !entry.hand) throw new TRPCError({ code: 'PRECONDITION_FAILED', message: `no hand is live: ${handId}'s files can be read while it runs` });
  return entry.hand.execute(tool, input, { callId: `share-${randomUUID()}`, signal: AbortSignal.timeout(30_000) });
}

/** Runs a file tool on a server-side hand for the IDE (never the brain's calls). */
async function runOnHand(rt: Runtime, sessionId: string, handId: string, tool: 'glob' | 'read' | 'write', input: Record<string, unknown>): Promise<string> {
  const scope = await userScope(rt, sessionId);
  const entry = await rt.hands.resolve(scope, handId);
  if (entry.kind === 'browser' || !entry.hand) throw new TRPCError({ code: 'BAD_REQUEST', message: `hand ${handId} lives in a browser tab: read it there` });
  // Through `use`: the user's reads count as use (an idle hand is not suspended under them).
  return rt.hands.use(scope, entry, (hand) => hand.execute(tool, input, { callId: `ide-${randomUUID()}`, signal: AbortSignal.timeout(30_000) }));
}
