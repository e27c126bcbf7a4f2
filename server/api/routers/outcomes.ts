import 'server-only';
import { z } from 'zod';
import { DEFAULT_OUTCOME_ITERATIONS, MAX_OUTCOME_ITERATIONS } from '~/lib/events';
import { SessionId } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure } from '~/server/api/trpc';
import { MAX_RUBRIC_CHARS, defineOutcome } from '~/server/commands/outcome-commands';

/** A session's outcomes: what the agent works toward, judged by a grader against a rubric. */
export const outcomesRouter = createTRPCRouter({
  /**
   * Defines an outcome on a session (a rubric as text or a file): work starts at once, no message needed, and
   * a grader judges each finished turn (span.outcome_evaluation_*). The same command as `/v1`'s
   * `user.define_outcome`.
   */
  define: protectedProcedure
    .input(
      z
        .object({
          sessionId: SessionId,
          description: z.string().trim().min(1, 'must not be empty').max(100_000),
          /** The rubric's text, or `rubricFileId`: a file of the Files API whose text is the rubric (read now). */
          rubric: z.string().trim().min(1, 'must not be empty').max(MAX_RUBRIC_CHARS).optional(),
          rubricFileId: z.string().regex(/^file_[A-Za-z0-9]+$/, 'must be a file id (file_…)').optional(),
          max_iterations: z.number().int().min(1).max(MAX_OUTCOME_ITERATIONS).default(DEFAULT_OUTCOME_ITERATIONS),
        })
        .refine((v) => (v.rubric === undefined) !== (v.rubricFileId === undefined), { message: 'give exactly one of rubric (its text) and rubricFileId (a file)', path: ['rubric'] }),
    )
    .mutation(({ ctx, input }) =>
      defineOutcome(ctx.runtime, input.sessionId, {
        description: input.description,
        rubric: input.rubricFileId ? { type: 'file', file_id: input.rubricFileId } : { type: 'text', content: input.rubric! },
        max_iterations: input.max_iterations,
      }),
    ),
});
