import 'server-only';
import { unreachable } from '~/lib/unreachable';
import { type Action, decideFrom } from '~/server/harness/core/decide';
import { modelTurn, policyOf } from '~/server/harness/steps/model-turn';
import type { StepContext } from '~/server/harness/steps/step-context';
import { resultOf } from '~/server/harness/core/result-events';
import { toolCalls } from '~/server/harness/steps/tool-calls';

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
    case 'go_idle': {
      // Calls wait for a worker: the session's work item first (made once, whoever races), so a
      // crash between the two leaves an item, never a session waiting on no one.
      const selfHosted = ctx.deps.selfHosted;
      if (action.worker && selfHosted) {
        const env = await ctx.read('read environment', () => selfHosted.environmentOf(ctx.sessionId));
        if (env !== null) await ctx.read('queue work', () => selfHosted.needWorker(ctx.sessionId, env));
      }
      // Only if nothing arrived since we decided: a new user.message must not be idled over.
      await ctx.write.ifLogEndsAt(ctx.view.lastSeq, [{ type: 'session.status_idle', stop_reason: action.stop_reason, stop_details: null }]);
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
    default:
      unreachable(action);
  }
}
