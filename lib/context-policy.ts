import { z } from 'zod';

/**
 * What of a session's log its model sees on each request: Paddock's extension to an agent
 * (`context_policy`), read by `buildContext`. Whatever the policy, the log keeps every event; the
 * brain reads any part of it again with the `session_events` tool (given with every policy but `full`).
 *
 * - `full`: everything (the default).
 * - `window`: the task (the first user message) and the most recent model turns that fit in
 *   `max_input_tokens`; what is left out is a marker naming its seq range. The window moves in
 *   steps (down to half the budget when it overflows), so the request prefix stays put, and
 *   cached, between steps.
 * - `clear_old_tool_results`: tool inputs kept, all but the `keep_recent` newest outputs replaced
 *   by a pointer to their seq, cleared in batches of `clear_batch` (the prefix changes once per batch).
 * - `compaction`: when the context nears `trigger_input_tokens`, the harness asks the model for a
 *   summary of everything so far and stores it (`agent.thread_context_compacted`, with the seq
 *   range it covers); later requests are the summary and what follows it.
 */
export const ContextPolicyParams = z.discriminatedUnion('type', [
  z.object({ type: z.literal('full') }).strict(),
  z.object({ type: z.literal('window'), max_input_tokens: z.number().int().min(2_000).max(2_000_000).optional() }).strict(),
  z
    .object({
      type: z.literal('clear_old_tool_results'),
      keep_recent: z.number().int().min(0).max(1_000).optional(),
      clear_batch: z.number().int().min(1).max(1_000).optional(),
    })
    .strict(),
  z.object({ type: z.literal('compaction'), trigger_input_tokens: z.number().int().min(2_000).max(2_000_000).optional() }).strict(),
]);
export type ContextPolicyParams = z.input<typeof ContextPolicyParams>;

export type ContextPolicy =
  | { type: 'full' }
  | { type: 'window'; max_input_tokens: number }
  | { type: 'clear_old_tool_results'; keep_recent: number; clear_batch: number }
  | { type: 'compaction'; trigger_input_tokens: number };

export const FULL_CONTEXT: ContextPolicy = { type: 'full' };

/** Whether an agent under this policy gets `session_events` (every policy that leaves something out of the context). */
export function offersRecall(policy: ContextPolicy | undefined): boolean {
  return (policy ?? FULL_CONTEXT).type !== 'full';
}

/** The stored (and served) form: every default filled in. */
export function normalizeContextPolicy(p: ContextPolicyParams | null | undefined): ContextPolicy {
  if (!p) return FULL_CONTEXT;
  switch (p.type) {
    case 'full':
      return FULL_CONTEXT;
    case 'window':
      return { type: 'window', max_input_tokens: p.max_input_tokens ?? 100_000 };
    case 'clear_old_tool_results':
      return { type: 'clear_old_tool_results', keep_recent: p.keep_recent ?? 5, clear_batch: p.clear_batch ?? 10 };
    case 'compaction':
      return { type: 'compaction', trigger_input_tokens: p.trigger_input_tokens ?? 150_000 };
  }
}

/**
 * Tokens of a piece of request text, estimated: about 4 characters each, which holds for English
 * prose and code with Claude's tokenizer within ~20%; JSON counts its quoting too. Used where no
 * count from the API is at hand, to decide when to window or compact (never for billing).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
