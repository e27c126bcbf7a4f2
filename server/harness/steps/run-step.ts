import 'server-only';
import type { NewEvent, StopReason } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';
import { reportEvents } from '~/server/harness/core/delegation';
import { type Action, decideFrom } from '~/server/harness/core/decide';
import { modelTurn, policyOf } from '~/server/harness/steps/model-turn';
import type { StepContext } from '~/server/harness/steps/step-context';
import { resultOf } from '~/server/harness/core/result-events';
import { toolCalls } from '~/server/harness/steps/tool-calls';
import { endEvaluation, evaluateOutcome } from '~/server/harness/steps/outcome-evaluation';

/**
 * A child thread that ends its turn reports what it said to the primary thread, in the batch that
 * idles it: never lost, never sent twice. Not after an interrupt (the report would wake the
 * coordinator the user stopped), nor while it waits for the user.
 */
function childReport(ctx: StepContext, stop: StopReason): NewEvent[] {
  const entry = ctx.thread?.entry;
  if (!entry || stop.type !== 'end_turn' || ctx.view.fold.state().interrupted) return [];
  return reportEvents(ctx.view.events, entry, ctx.thread.primaryId);
}

/** A self-hosted session's work item, made unless it has a live one (nothing for other sessions). */
async function queueWork(ctx: StepContext): Promise<void> {
  const selfHosted = ctx.deps.selfHosted;
  if (!selfHosted) return;
  const env = await ctx.read('read environment', () => selfHosted.environmentOf(ctx.sessionId));
  if (env !== null) await ctx.read('queue work', () => selfHosted.needWorker(ctx.sessionId, env));
}

/** Does one action decide() chose. */
export async function runStep(ctx: StepContext, action: Exclude<Action, { kind: 'none' }>): Promise<void> {
  switch (action.kind) {
    case 'mark_running': {
      // A dormant self-hosted session that takes work (a message, an outcome) asks for its worker
      // now, as the hosted API does: the worker attaches while the model thinks, ready for the calls.
      await queueWork(ctx);
      // A wake that goes straight to the model stores the status with the request's span start:
      // one commit fewer before the first token. Not under compaction, whose summary stands for
      // every event before it (the status included).
      const next = decideFrom({ ...ctx.view.fold.state(), status: 'running' });
      const compacting = policyOf(await ctx.agent()).type === 'compaction';
      if (next.kind === 'call_model' && !compacting) await modelTurn(ctx, next, true);
      else await ctx.write.once([{ type: 'session.status_running' }]);
      return;
    }
    case 'go_idle': {
      // Calls wait for a worker: the session's work item first (made once, whoever races), so a
      // crash between the two leaves an item, never a session waiting on no one.
      if (action.worker) await queueWork(ctx);
      // Only if nothing arrived since we decided: a new user.message must not be idled over.
      await ctx.write.ifLogEndsAt(ctx.view.lastSeq, [{ type: 'session.status_idle', stop_reason: action.stop_reason, stop_details: null }, ...childReport(ctx, action.stop_reason)]);
      return;
    }
    case 'cancel_tools':
      for (const call of action.calls) await ctx.write.keyedOnce(resultOf(call, [{ type: 'text', text: action.reason }], true), call.id);
      return;
    case 'deny_tools':
      for (const { call, message } of action.denials) await ctx.write.keyedOnce(resultOf(call, [{ type: 'text', text: message }], true), call.id);
      return;
    case 'fail_tools':
      // Keyed by the call, as a worker's own result is: of a late result and this error, one is stored.
      for (const { call, message } of action.failures) await ctx.write.keyedOnce(resultOf(call, [{ type: 'text', text: message }], true), call.id);
      return;
    case 'run_tools':
      await ctx.interruptible((signal) => toolCalls(ctx, action, signal));
      return;
    case 'call_model':
      await modelTurn(ctx, action);
      return;
    case 'evaluate_outcome':
      await evaluateOutcome(ctx, action.outcome, action.open);
      return;
    case 'end_evaluation':
      await endEvaluation(ctx, action.evaluation);
      return;
    default:
      unreachable(action);
  }
}
