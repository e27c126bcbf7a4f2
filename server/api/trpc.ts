import 'server-only';
import { TRPCError, initTRPC } from '@trpc/server';
import { ZodError } from 'zod';
import { describeZodError } from '~/lib/events';
import { type DomainError, isDomainError } from '~/lib/errors';
import { unreachable } from '~/lib/unreachable';
import type { Caller } from '~/server/access/access';
import type { Runtime } from '~/server/runtime';

export interface Context {
  runtime: Runtime;
  /** Who is calling, identified once per request by the HTTP handler (server/api/http-handler.ts). */
  caller: Caller;
  /** The client's address (server/access/client-ip.ts): the widget's per-IP limits. */
  ip?: string;
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    // A validation failure names the field: "content.0.text: expected string".
    const zod = error.cause instanceof ZodError ? error.cause : null;
    return {
      ...shape,
      message: zod ? `invalid input: ${describeZodError(zod)}` : shape.message,
      data: { ...shape.data, stack: undefined, issues: zod ? zod.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) : null },
    };
  },
});

/** The tRPC code each domain error is answered with. */
function codeOf(e: DomainError): TRPCError['code'] {
  switch (e.code) {
    case 'not_found':
      return 'NOT_FOUND';
    case 'invalid_input':
      return 'BAD_REQUEST';
    case 'forbidden':
      return 'FORBIDDEN';
    case 'precondition_failed':
      return 'PRECONDITION_FAILED';
    case 'stale_fence':
    case 'seq_conflict':
    case 'conflict':
      return 'CONFLICT';
    case 'too_large':
      return 'PAYLOAD_TOO_LARGE';
    case 'store_unavailable':
      // 503, which tRPC clients (and the SSE link) treat as retryable; the message is the clean
      // domain one, never the driver's text.
      return 'SERVICE_UNAVAILABLE';
    default:
      return unreachable(e.code);
  }
}

/**
 * A domain error as the TRPCError the client gets. The middleware below applies it to procedures;
 * a subscription applies it itself to errors thrown inside its stream, which no middleware sees.
 */
export function domainToTRPC(e: DomainError): TRPCError {
  return new TRPCError({ code: codeOf(e), message: e.message, cause: e });
}

/**
 * Domain errors become tRPC codes here, at the edge, and so does a hand's ToolError (an unknown
 * hand, a path outside the workspace: the caller's mistake). Both are matched by name, not
 * instanceof: Next loads separate copies of a module, and an error from one copy is no instance
 * of the other's class. Anything else is a real 500.
 */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (isDomainError(cause)) throw domainToTRPC(cause);
  if (cause instanceof Error && cause.name === 'ToolError') throw new TRPCError({ code: 'BAD_REQUEST', message: cause.message, cause });
  return result;
});

/** What every procedure but the session reads answers a share link's viewer. */
export const VIEWER_READ_ONLY = 'a share link is read-only: it reads its one session and changes nothing';

/** What every procedure but the widget's and its own session reads answers a widget's visitor. */
export const VISITOR_WIDGET_ONLY = "a widget's visitor talks to its agent through the widget, and reads only its own conversations";

/**
 * The one access check: every procedure is built on this (or on its session-read, visitor or
 * widget-open variants below), so a caller is never unchecked. Owner or API key; a share link's
 * viewer and a widget's visitor are refused here.
 */
const requireCaller = t.middleware(({ ctx, next }) => {
  const caller = ctx.caller;
  if (caller.kind === 'anonymous') throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in (or send an API key) first' });
  if (caller.kind === 'viewer') throw new TRPCError({ code: 'FORBIDDEN', message: VIEWER_READ_ONLY });
  if (caller.kind === 'visitor') throw new TRPCError({ code: 'FORBIDDEN', message: VISITOR_WIDGET_ONLY });
  return next({ ctx: { ...ctx, caller } });
});

/** A widget's visitor only: the widget's own procedures (its agent, its sessions). */
const requireVisitor = t.middleware(({ ctx, next }) => {
  const caller = ctx.caller;
  if (caller.kind === 'anonymous') throw new TRPCError({ code: 'UNAUTHORIZED', message: 'open the widget first (its visitor token is missing, expired, or the widget is off for this site)' });
  if (caller.kind !== 'visitor') throw new TRPCError({ code: 'FORBIDDEN', message: 'only a widget visitor calls this' });
  return next({ ctx: { ...ctx, caller } });
});

/**
 * Opening a widget: the one procedure an anonymous caller reaches (a visitor's sign-in: it checks
 * the agent's widget is on and the origin allowed, then hands out a visitor token). Nothing else.
 */
const anyCaller = t.middleware(({ ctx, next }) => {
  if (ctx.caller.kind === 'viewer') throw new TRPCError({ code: 'FORBIDDEN', message: VIEWER_READ_ONLY });
  return next({ ctx });
});

/** Only the signed-in owner, never a program: what manages credentials (a leaked key cannot mint more). */
const requireOwner = t.middleware(({ ctx, next }) => {
  if (ctx.caller.kind !== 'owner') {
    throw new TRPCError({ code: ctx.caller.kind === 'anonymous' ? 'UNAUTHORIZED' : 'FORBIDDEN', message: 'only the owner, signed in in a browser, may do this' });
  }
  return next();
});

/**
 * The same check for a read of one session, which a share link's viewer may also make, of its
 * own session only: the session is the input's `key` field, compared before the procedure runs
 * (another session's id is a 404, so a link says nothing about other sessions).
 */
function requireSessionReader(key: 'sessionId' | 'id', visitors: boolean) {
  return t.middleware(async ({ ctx, next, getRawInput }) => {
    const caller = ctx.caller;
    if (caller.kind === 'anonymous') throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in (or send an API key) first' });
    if (caller.kind === 'viewer' || caller.kind === 'visitor') {
      if (caller.kind === 'visitor' && !visitors) throw new TRPCError({ code: 'FORBIDDEN', message: VISITOR_WIDGET_ONLY });
      const raw = await getRawInput();
      const named = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
      if (caller.kind === 'viewer' && named !== caller.sessionId) throw new TRPCError({ code: 'NOT_FOUND', message: 'this share link does not open that session' });
      // A visitor reads the sessions it started through this agent's widget; any other id is unknown to it.
      if (caller.kind === 'visitor' && (typeof named !== 'string' || named.length > 100 || !(await ctx.runtime.access.widgets.store.owns(caller.visitor, caller.agentId, named)))) {
        throw new TRPCError({ code: 'NOT_FOUND', message: 'no such conversation' });
      }
    }
    return next({ ctx: { ...ctx, caller } });
  });
}

export const createTRPCRouter = t.router;
/** Every procedure is one of these: signed in owner or API key. */
export const protectedProcedure = t.procedure.use(requireCaller).use(mapDomainErrors);
export const ownerProcedure = protectedProcedure.use(requireOwner);
/**
 * A read of the session named by the input's `key`: owner, API key, a share link's viewer of that
 * session, or (with `visitors`) a widget's visitor of a session it started.
 */
export const sessionReadProcedure = (key: 'sessionId' | 'id', o: { visitors?: boolean } = {}) => t.procedure.use(requireSessionReader(key, o.visitors ?? false)).use(mapDomainErrors);
/** The widget's own procedures: a visitor only. */
export const visitorProcedure = t.procedure.use(requireVisitor).use(mapDomainErrors);
/** `widget.open` alone: anyone (it decides itself, from the agent's widget settings). */
export const widgetOpenProcedure = t.procedure.use(anyCaller).use(mapDomainErrors);
export const createCallerFactory = t.createCallerFactory;
