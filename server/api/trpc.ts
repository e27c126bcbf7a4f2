import 'server-only';
import { TRPCError, initTRPC } from '@trpc/server';
import { ZodError } from 'zod';
import { describeZodError } from '~/lib/events';
import { isDomainError } from '~/lib/errors';
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

/** Domain errors become tRPC codes here, at the edge; anything else is a real 500. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok || !isDomainError(result.error.cause)) return result;
  const e = result.error.cause;
  let code: TRPCError['code'];
  switch (e.code) {
    case 'not_found':
      code = 'NOT_FOUND';
      break;
    case 'invalid_input':
      code = 'BAD_REQUEST';
      break;
    case 'stale_fence':
    case 'seq_conflict':
    case 'conflict':
      code = 'CONFLICT';
      break;
    default:
      unreachable(e.code);
  }
  throw new TRPCError({ code, message: e.message, cause: e });
});

export const createTRPCRouter = t.router;
export const publicProcedure = t.procedure.use(mapDomainErrors);
export const createCallerFactory = t.createCallerFactory;
