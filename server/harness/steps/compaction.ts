import 'server-only';
import type { StoredEvent } from '~/lib/events';
import { compactionRequest, requestTokens, shouldCompact } from '~/server/harness/core/compaction';
import { type RequestSettings, buildContext } from '~/server/harness/core/context';
import type { TurnBlock } from '~/server/harness/core/model-client';
import { ModelError } from '~/server/harness/core/model-client';
import { StepAbort } from '~/server/harness/steps/step-abort';
import type { StepContext } from '~/server/harness/steps/step-context';
import { errorFields, logger } from '~/server/log';

const log = logger('harness');

/**
 * Compaction: when the request would be over `trigger` tokens, the model is asked (same prefix,
 * no tools) for a summary, stored as `agent.thread_context_compacted` covering every event so
 * far; requests are then built from it (context-shape.ts). True when it stored one or the step
 * was interrupted; false to go on with the request as it is (under the trigger, or the summary
 * request failed: the turn's own request then meets whatever the model server says).
 */
export async function compact(ctx: StepContext, events: readonly StoredEvent[], settings: RequestSettings, trigger: number): Promise<boolean> {
  const { model } = ctx.deps;
  const request = buildContext(events, settings);
  // The calibrated estimate, and near the trigger the model server's own count where it has one.
  let tokens = requestTokens(request) * (settings.tokenScale ?? 1);
  if (tokens > trigger * 0.8 && model.countTokens) {
    const counted = await ctx.interruptible((signal) => model.countTokens!(request, signal));
    if (counted instanceof StepAbort) return true;
    if (counted !== null) tokens = counted;
  }
  if (!shouldCompact(tokens, events, trigger)) return false;
  const toSeq = events.at(-1)!.seq;
  let outcome;
  try {
    outcome = await ctx.interruptible((signal) => model.stream(compactionRequest(request), { signal, onDelta: () => undefined }));
  } catch (e) {
    if (!(e instanceof ModelError)) throw e;
    log.warn('context not compacted: the summary request failed', { session: ctx.sessionId, ...errorFields(e) });
    return false;
  }
  if (outcome instanceof StepAbort) return true;
  const summary = outcome.content
    .filter((b): b is Extract<TurnBlock, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
    .trim();
  if (!summary) return false;
  await ctx.write.keyed('store compaction', [{ type: 'agent.thread_context_compacted', summary, from_seq: 1, to_seq: toSeq, model_usage: outcome.usage }], `compact:${toSeq}`);
  log.info('context compacted', { session: ctx.sessionId, to_seq: toSeq, summary_chars: summary.length });
  return true;
}
