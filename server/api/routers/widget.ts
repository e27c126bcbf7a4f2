import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { isDomainError } from '~/lib/errors';
import { BUDGET_SPENT, type BudgetUse, WidgetOrigin, type WidgetSettings, spentBudget, widgetAllows } from '~/lib/widget';
import { createSessionFor } from '~/server/agents/new-session';
import type { Caller } from '~/server/access/access';
import { AgentId, SessionId } from '~/server/api/inputs';
import { checkEventSize } from '~/server/commands/limits';
import { sendEvents } from '~/server/commands/session-commands';
import { createTRPCRouter, visitorProcedure, widgetOpenProcedure } from '~/server/api/trpc';
import { errorFields, logger } from '~/server/log';
import type { Runtime } from '~/server/runtime';
import { budgetUse, endSpentConversation } from '~/server/widgets/budget-watch';

const log = logger('widget');

/** Longest message a visitor may send, in characters (the server's own limit applies too, if lower). */
export const WIDGET_MAX_MESSAGE_CHARS = 4_000;

type Visitor = Extract<Caller, { kind: 'visitor' }>;

const UNAVAILABLE = 'this widget is not available here';

/** The agent's widget settings, as long as they still let this visitor in (identify checked; a race may have turned it off). */
async function settingsFor(rt: Runtime, v: Visitor): Promise<WidgetSettings> {
  const settings = await rt.access.widgets.store.settings(v.agentId);
  if (!settings || !widgetAllows(settings, v.origin)) throw new TRPCError({ code: 'NOT_FOUND', message: UNAVAILABLE });
  return settings;
}

function limitAction(rt: Runtime, v: Visitor, ip: string, s: WidgetSettings): void {
  if (!rt.access.widgets.takeAction({ agentId: v.agentId, visitor: v.visitor, ip, visitorPerMinute: s.visitor_per_minute, ipPerMinute: s.ip_per_minute })) {
    throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: 'too many messages: wait a minute and try again' });
  }
}

/** What a visitor is told of a conversation that has ended (terminated): final, a new one goes on. */
export const CONVERSATION_ENDED = 'this conversation has ended: start a new one';

/** Refuses a conversation that has ended (CONFLICT): it takes no more messages nor stops. */
async function refuseEnded(rt: Runtime, sessionId: string): Promise<void> {
  const session = await rt.store.getSession(sessionId);
  if (!session) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
  if (session.status === 'terminated') throw new TRPCError({ code: 'CONFLICT', message: CONVERSATION_ENDED });
}

/** The conversation's budget use, as `widget.send` and the budget watch count it. */
async function useOf(rt: Runtime, sessionId: string): Promise<BudgetUse> {
  const use = await budgetUse(rt.store, sessionId);
  if (!use) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
  return use;
}

/**
 * Whether a turn is running or about to: the session runs (or retries a model request), or its
 * newest message has not been taken up yet (stored, the harness not yet marked running).
 */
async function busy(rt: Runtime, sessionId: string): Promise<{ busy: boolean; messageSeq: number }> {
  const session = await rt.store.getSession(sessionId);
  if (!session) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
  const [newest] = await rt.store.getEvents(sessionId, { types: ['user.message', 'session.status_running', 'session.status_idle', 'session.status_terminated'], order: 'desc', limit: 1 });
  const [message] = await rt.store.getEvents(sessionId, { types: ['user.message'], order: 'desc', limit: 1 });
  const running = session.status === 'running' || session.status === 'rescheduling' || newest?.type === 'user.message' || newest?.type === 'session.status_running';
  return { busy: running, messageSeq: message?.seq ?? 0 };
}

/**
 * The docs widget's procedures (`/embed/<agent>`). `open` is a visitor's sign-in (anyone may ask;
 * it answers only for an agent whose widget is on for that origin); everything else is a visitor's
 * own: its conversations with its one agent, messages to them (rate-limited per visitor and per
 * IP, refused once the conversation's token or time budget is spent). Reading a conversation goes
 * through `events.list` / `events.follow`, which let a visitor read only the sessions it started.
 * `stop` stops the visitor's running answer, as the owner's stop does (a `user.interrupt`).
 */
export const widgetRouter = createTRPCRouter({
  open: widgetOpenProcedure.input(z.object({ agentId: AgentId, origin: WidgetOrigin })).mutation(async ({ ctx, input }) => {
    const rt = ctx.runtime;
    const settings = await rt.access.widgets.store.settings(input.agentId);
    if (!widgetAllows(settings, input.origin)) throw new TRPCError({ code: 'NOT_FOUND', message: UNAVAILABLE });
    let agent;
    try {
      agent = await rt.agents.getAgent(input.agentId);
    } catch (e) {
      if (isDomainError(e) && e.code === 'not_found') throw new TRPCError({ code: 'NOT_FOUND', message: UNAVAILABLE });
      throw e;
    }
    if (agent.archived_at !== null) throw new TRPCError({ code: 'NOT_FOUND', message: UNAVAILABLE });
    const s = settings!;
    const info = {
      agent: { name: s.display_name || agent.name },
      greeting: s.greeting,
      suggested_questions: s.suggested_questions,
      show_tool_names: s.show_tool_names,
      budget: { max_tokens: s.max_tokens_per_session, max_minutes: s.max_minutes_per_session },
    };
    const caller = ctx.caller;
    // A returning visitor keeps its token (and so its conversations).
    if (caller.kind === 'visitor' && caller.agentId === input.agentId && caller.origin === input.origin) return { ...info, token: null };
    if (!rt.access.widgets.takeNewVisitor(ctx.ip ?? 'unknown')) throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: 'too many new visitors from this address: try again later' });
    const { token } = await rt.access.newVisitorToken(input.agentId, input.origin);
    return { ...info, token };
  }),

  /** The visitor's own conversations with this agent, newest first. */
  sessions: visitorProcedure.query(async ({ ctx }) => {
    await settingsFor(ctx.runtime, ctx.caller);
    return ctx.runtime.access.widgets.store.visitorSessions(ctx.caller.visitor, ctx.caller.agentId);
  }),

  /** A new conversation with the widget's agent, in the environment its settings name (server-side hands only). */
  create: visitorProcedure.mutation(async ({ ctx }) => {
    const rt = ctx.runtime;
    const v = ctx.caller;
    const settings = await settingsFor(rt, v);
    if ((await rt.access.widgets.store.startedSince(v.agentId, Date.now() - 60 * 60_000)) >= settings.sessions_per_hour) {
      throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: 'this assistant is busy: try again later' });
    }
    limitAction(rt, v, ctx.ip ?? 'unknown', settings);
    const { session } = await createSessionFor(
      { store: rt.store, agents: rt.agents, vaults: rt.vaults, config: rt.config },
      { agent: v.agentId, environment_id: settings.environment_id, metadata: { widget_origin: v.origin } },
    );
    try {
      await rt.access.widgets.store.recordSession({ sessionId: session.id, agentId: v.agentId, origin: v.origin, visitorHash: v.visitor });
    } catch (e) {
      // A session no visitor owns would be nobody's: it goes.
      await rt.store.deleteSession(session.id).catch(() => undefined);
      throw e;
    }
    return { id: session.id, title: session.title, status: session.status, created_at: session.created_at, updated_at: session.updated_at };
  }),

  /** A message from the visitor to one of its conversations. */
  send: visitorProcedure
    .input(
      z.object({
        sessionId: SessionId,
        text: z.string().trim().min(1, 'must not be empty'),
        idempotencyKey: z.string().min(8).max(100).regex(/^[\w-]+$/, 'must be letters, digits, _ or -').optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const rt = ctx.runtime;
      const v = ctx.caller;
      if (!(await rt.access.widgets.store.owns(v.visitor, v.agentId, input.sessionId))) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
      const settings = await settingsFor(rt, v);
      if (input.text.length > WIDGET_MAX_MESSAGE_CHARS) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `a message has at most ${WIDGET_MAX_MESSAGE_CHARS} characters` });
      const event = { type: 'user.message' as const, content: [{ type: 'text' as const, text: input.text }] };
      checkEventSize(rt.config, event);
      await refuseEnded(rt, input.sessionId);
      const spent = spentBudget(settings, await useOf(rt, input.sessionId), Date.now());
      if (spent) {
        // Spent with no turn cut (its last request crossed the tokens, or the minutes ran out while
        // idle): it ends now, as the budget watch ends a cut one. The refusal stands either way.
        await endSpentConversation(rt.store, input.sessionId).catch((e: unknown) => log.warn('ending a spent conversation failed', { session: input.sessionId, ...errorFields(e) }));
        throw new TRPCError({ code: 'PRECONDITION_FAILED', message: BUDGET_SPENT });
      }
      limitAction(rt, v, ctx.ip ?? 'unknown', settings);
      // Stored, woken and named as any send is (the commands layer).
      const [stored] = await sendEvents(rt, input.sessionId, [event], { where: () => 'event', ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}) });
      return stored!;
    }),

  /**
   * Stops the running answer of one of the visitor's conversations: a `user.interrupt`, stored as
   * the owner's stop stores it (the harness aborts the step in flight when it sees it); the
   * conversation then goes on with the next message. Counted like a message (a flood is 429).
   * Idempotent: an idle conversation is left as it is, and stops of one turn store one interrupt.
   */
  stop: visitorProcedure.input(z.object({ sessionId: SessionId })).mutation(async ({ ctx, input }) => {
    const rt = ctx.runtime;
    const v = ctx.caller;
    if (!(await rt.access.widgets.store.owns(v.visitor, v.agentId, input.sessionId))) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
    const settings = await settingsFor(rt, v);
    await refuseEnded(rt, input.sessionId);
    limitAction(rt, v, ctx.ip ?? 'unknown', settings);
    const { busy: running, messageSeq } = await busy(rt, input.sessionId);
    if (!running) return { stopped: false };
    // Keyed by the turn (its message): a double press or a retried request stores one interrupt.
    await rt.store.emitEvent(input.sessionId, { type: 'user.interrupt' }, { idempotencyKey: `stop:${messageSeq}` });
    void rt.harness.wake(input.sessionId);
    return { stopped: true };
  }),
});
