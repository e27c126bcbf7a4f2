import 'server-only';
import { z } from 'zod';
import { DEFAULT_OUTCOME_ITERATIONS, MAX_OUTCOME_ITERATIONS } from '~/lib/events';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure } from '~/server/api/trpc';
import { MAX_RUBRIC_CHARS, defineOutcome } from '~/server/commands/outcome-commands';

/** A session's outcomes: what the agent works toward, judged by a grader against a rubric. */
export const outcomesRouter = createTRPCRouter({
  /**
   * Defines an outcome on a session (a text rubric): work starts at once, no message needed, and
   * a grader judges each finished turn (span.outcome_evaluation_*). The same command as `/v1`'s
   * `user.define_outcome`.
   */
  define: protectedProcedure
    .input(
      z.object({
        sessionId: SessionId,
        description: z.string().trim().min(1, 'must not be empty').max(100_000),
        rubric: z.string().trim().min(1, 'must not be empty').max(MAX_RUBRIC_CHARS),
        max_iterations: z.number().int().min(1).max(MAX_OUTCOME_ITERATIONS).default(DEFAULT_OUTCOME_ITERATIONS),
      }),
    )
    .mutation(({ ctx, input }) =>
      defineOutcome(ctx.runtime, input.sessionId, { description: input.description, rubric: { type: 'text', content: input.rubric }, max_iterations: input.max_iterations }),
    ),
});
