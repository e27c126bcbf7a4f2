import 'server-only';
import { unreachable } from '~/lib/unreachable';
import { type Action, decideFrom } from '~/server/harness/core/decide';
import { modelTurn, policyOf } from '~/server/harness/steps/model-turn';
import type { StepContext } from '~/server/harness/steps/step-context';
import { resultOf } from '~/server/harness/core/result-events';
import { toolCalls } from '~/server/harness/steps/tool-calls';
import { endEvaluation, evaluateOutcome } from '~/server/harness/steps/outcome-evaluation';

/** Does one action decide() chose. */
export async function runStep(ctx: StepContext, action: Exclude<Action, { kind: 'none' }>): Promise<void> {
  switch (action.kind) {
    case 'mark_running': {
      // A wake that goes straight to the model stores the status with the request's span start:
      // one commit fewer before the first token. Not under compaction, whose summary stands for
      // every event before it (the status included).
      const next = decideFrom({ ...ctx.view.fold.state(), status: 'running' });
      const compacting = policyOf(await ctx.agent()).type === 'compaction';
      if (next.kind === 'call_model' && !compacting) await modelTurn(ctx, next, true);
      else await ctx.write.once([{ type: 'session.status_running' }]);
      return;
    }
    case 'go_idle':
      // Only if nothing arrived since we decided: a new user.message must not be idled over.
      await ctx.write.ifLogEndsAt(ctx.view.lastSeq, [{ type: 'session.status_idle', stop_reason: action.stop_reason, stop_details: null }]);
      return;
    case 'cancel_tools':
      for (const call of action.calls) await ctx.write.keyedOnce(resultOf(call, [{ type: 'text', text: action.reason }], true), call.id);
      return;
    case 'deny_tools':
      for (const { call, message } of action.denials) await ctx.write.keyedOnce(resultOf(call, [{ type: 'text', text: message }], true), call.id);
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
