import 'server-only';
import type { ModelUsage, NewEvent, OutcomeResult } from '~/lib/events';
import { accountLog } from '~/lib/usage';
import { ModelError, type ModelTurn } from '~/server/harness/core/model-client';
import { agentWork, graderRequest, parseVerdict } from '~/server/harness/core/outcome-grader';
import { type ActiveOutcome, type OpenEvaluation, verdictResult } from '~/server/harness/core/outcomes';
import { StepAbort } from '~/server/harness/steps/step-abort';
import type { StepContext } from '~/server/harness/steps/step-context';
import { errorFields, logger } from '~/server/log';

const log = logger('harness');

const NO_USAGE: ModelUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** How often a running evaluation says it is alive (`span.outcome_evaluation_ongoing`). */
export const DEFAULT_HEARTBEAT_MS = 10_000;

function endOf(ev: OpenEvaluation, result: OutcomeResult, explanation: string, usage: ModelUsage): NewEvent {
  return { type: 'span.outcome_evaluation_end', outcome_evaluation_start_id: ev.start_id, outcome_id: ev.outcome_id, iteration: ev.iteration, result, explanation, usage };
}

/**
 * One evaluation: its span started (keyed by outcome and iteration, so a repeat finds the one
 * stored), the grader asked with heartbeats meanwhile, then its verdict stored as the span's end
 * (keyed by the start: stored once, with the grader's usage, whoever repeats it). A crash before
 * the end leaves the span open and the next run asks again; the lost request was never counted.
 */
export async function evaluateOutcome(ctx: StepContext, outcome: ActiveOutcome, open: OpenEvaluation | null): Promise<void> {
  const { model } = ctx.deps;
  let ev = open;
  if (!ev) {
    const [start] = await ctx.write.keyed('start evaluation', [{ type: 'span.outcome_evaluation_start', outcome_id: outcome.outcome_id, iteration: outcome.iteration }], `outcome-eval:${outcome.outcome_id}:${outcome.iteration}`);
    if (!start || start.type !== 'span.outcome_evaluation_start') throw new Error('evaluation start not stored');
    ev = { start_id: start.id, outcome_id: start.outcome_id, iteration: start.iteration };
  }
  const agent = await ctx.agent();
  const request = graderRequest(outcome, agentWork(ctx.view.events, outcome.defined_seq), ctx.deps.graderModel ?? (agent && !model.isDemo ? agent.model.id : model.model), ctx.deps.maxTokens ?? 8192);
  const current = ev;
  // The heartbeat in flight, awaited before the end is written: none lands after its span ended.
  let beating: Promise<unknown> = Promise.resolve();
  const beat = setInterval(() => {
    beating = ctx.write.once([{ type: 'span.outcome_evaluation_ongoing', outcome_id: current.outcome_id, iteration: current.iteration }]).catch((e: unknown) => log.debug('evaluation heartbeat not stored', { session: ctx.sessionId, ...errorFields(e) }));
  }, ctx.deps.outcomeHeartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  let answer: ModelTurn | StepAbort;
  try {
    answer = await ctx.interruptible((signal) => model.stream(request, { signal, onDelta: () => undefined }));
  } catch (e) {
    if (!(e instanceof ModelError)) throw e;
    log.warn('grader request failed', { session: ctx.sessionId, status: e.status });
    await ctx.write.keyed('end evaluation', [endOf(ev, 'failed', `The grader's request failed: ${e.message}`, NO_USAGE)], `outcome-eval-end:${ev.start_id}`);
    return;
  } finally {
    clearInterval(beat);
    await beating;
  }
  if (answer instanceof StepAbort) {
    // Only the user's interrupt ends it; a lost lease or a closing harness leaves it open for the next run.
    if (answer.why !== 'interrupt') throw answer;
    await ctx.write.keyed('end evaluation', [endOf(ev, 'interrupted', 'The user interrupted the evaluation.', NO_USAGE)], `outcome-eval-end:${ev.start_id}`);
    return;
  }
  const verdict = parseVerdict(answer.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
  const result = verdictResult(verdict.result, ev.iteration, outcome.max_iterations);
  const end = endOf(ev, result, verdict.explanation, answer.usage);
  // With the verdict, a snapshot of the session's usage that counts the grader's request.
  const history = await ctx.read('read usage', () => ctx.readLog(ctx.view.lastSeq));
  const { usage: u, stats } = accountLog(history, new Date().toISOString(), Date.now());
  const g = answer.usage;
  const usage = {
    input_tokens: u.input_tokens + g.input_tokens,
    output_tokens: u.output_tokens + g.output_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens + g.cache_read_input_tokens,
    cache_creation: { ...u.cache_creation, ephemeral_5m_input_tokens: u.cache_creation.ephemeral_5m_input_tokens + g.cache_creation_input_tokens },
    active_seconds: stats.active_seconds,
  };
  await ctx.write.keyed('end evaluation', [end, { type: 'session.usage', usage }], `outcome-eval-end:${ev.start_id}`);
}

/** An evaluation that cannot go on ends `interrupted` (keyed by its start: once). */
export async function endEvaluation(ctx: StepContext, ev: OpenEvaluation): Promise<void> {
  await ctx.write.keyed('end evaluation', [endOf(ev, 'interrupted', 'The evaluation was interrupted.', NO_USAGE)], `outcome-eval-end:${ev.start_id}`);
}
