import 'server-only';
import { TRPCError, initTRPC } from '@trpc/server';
import { ZodError } from 'zod';
import { describeZodError } from '~/lib/events';
import { type DomainError, isDomainError } from '~/lib/errors';
import { unreachable } from '~/lib/unreachable';
import type { Runtime } from '~/server/runtime';

export interface Context {
  runtime: Runtime;
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
    case 'stale_fence':
    case 'seq_conflict':
    case 'conflict':
      return 'CONFLICT';
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

/** Domain errors become tRPC codes here, at the edge; anything else is a real 500. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok || !isDomainError(result.error.cause)) return result;
  throw domainToTRPC(result.error.cause);
});

export const createTRPCRouter = t.router;
export const publicProcedure = t.procedure.use(mapDomainErrors);
export const createCallerFactory = t.createCallerFactory;
