import { describe, expect, it } from 'vitest';
import type { OutcomeResult, StoredEventOf } from '~/lib/events';
import { type Action, DecideFold, decide } from '~/server/harness/core/decide';
import { agentWork, parseVerdict } from '~/server/harness/core/outcome-grader';
import { verdictResult } from '~/server/harness/core/outcomes';
import { buildContext } from '~/server/harness/core/context';
import { StoredLog, USAGE } from '~/server/harness/testing/log-builder';

class Log extends StoredLog {
  decide(): Action {
    return decide(this.events);
  }
  define(max: number | null = 3): StoredEventOf<'user.define_outcome'> {
    return this.add({ type: 'user.define_outcome', outcome_id: 'outc_1', description: 'Write a haiku', rubric: { type: 'text', content: '5-7-5' }, max_iterations: max });
  }
  running() {
    return this.add({ type: 'session.status_running' });
  }
  turn(text = 'an old silent pond') {
    const start = this.add({ type: 'span.model_request_start', model: 'claude-test' });
    this.add({ type: 'agent.message', content: [{ type: 'text', text }] });
    this.add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: USAGE });
  }
  evalStart(iteration: number) {
    return this.add({ type: 'span.outcome_evaluation_start', outcome_id: 'outc_1', iteration });
  }
  evalEnd(start: StoredEventOf<'span.outcome_evaluation_start'>, result: OutcomeResult) {
    return this.add({ type: 'span.outcome_evaluation_end', outcome_evaluation_start_id: start.id, outcome_id: 'outc_1', iteration: start.iteration, result, explanation: `because ${result}`, usage: USAGE });
  }
}

describe('decide: outcomes', () => {
  it('starts work on a defined outcome at once, with no message', () => {
    const log = new Log();
    log.define();
    expect(log.decide()).toEqual({ kind: 'mark_running' });
    log.running();
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
  });

  it('grades the agent\'s finished turn before the session goes idle, at iteration 0', () => {
    const log = new Log();
    const defined = log.define();
    log.running();
    log.turn();
    const action = log.decide();
    expect(action).toMatchObject({ kind: 'evaluate_outcome', open: null, outcome: { outcome_id: 'outc_1', iteration: 0, max_iterations: 3, rubric: '5-7-5', defined_seq: defined.seq } });
  });

  it('sends a needs_revision explanation back to the agent, then grades the next iteration', () => {
    const log = new Log();
    log.define();
    log.running();
    log.turn();
    log.evalEnd(log.evalStart(0), 'needs_revision');
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
    const request = buildContext(log.events, { model: 'm', maxTokens: 100, system: 's', tools: [] });
    expect(JSON.stringify(request.messages.at(-1))).toContain('because needs_revision');
    log.turn('revised');
    expect(log.decide()).toMatchObject({ kind: 'evaluate_outcome', outcome: { iteration: 1 } });
  });

  it('goes idle once the grader is satisfied (or says failed), grading nothing more', () => {
    for (const result of ['satisfied', 'failed'] as const) {
      const log = new Log();
      log.define();
      log.running();
      log.turn();
      log.evalEnd(log.evalStart(0), result);
      expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
    }
  });

  it('gives the agent one last turn after max_iterations_reached, then goes idle without grading it', () => {
    const log = new Log();
    log.define(1);
    log.running();
    log.turn();
    log.evalEnd(log.evalStart(0), 'max_iterations_reached');
    expect(log.decide()).toEqual({ kind: 'call_model', attempt: 1 });
    log.turn('understood');
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('redoes an evaluation a crash left open, under its stored start (never a second start)', () => {
    const log = new Log();
    log.define();
    log.running();
    log.turn();
    const start = log.evalStart(0);
    log.add({ type: 'span.outcome_evaluation_ongoing', outcome_id: 'outc_1', iteration: 0 });
    expect(log.decide()).toMatchObject({ kind: 'evaluate_outcome', open: { start_id: start.id, iteration: 0 } });
  });

  it('ends an evaluation the user interrupted as interrupted, then goes idle', () => {
    const log = new Log();
    log.define();
    log.running();
    log.turn();
    const start = log.evalStart(0);
    log.add({ type: 'user.interrupt' });
    expect(log.decide()).toEqual({ kind: 'end_evaluation', evaluation: { start_id: start.id, outcome_id: 'outc_1', iteration: 0 } });
    log.evalEnd(start, 'interrupted');
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('gives up an outcome the user interrupts while the agent works on it (nothing graded)', () => {
    const log = new Log();
    log.define();
    log.running();
    log.add({ type: 'user.interrupt' });
    log.turn();
    expect(log.decide()).toEqual({ kind: 'go_idle', stop_reason: { type: 'end_turn' } });
  });

  it('decides the same from a restored fold snapshot mid-evaluation (checkpoints carry outcomes)', () => {
    const log = new Log();
    log.define();
    log.running();
    log.turn();
    log.evalStart(0);
    const fold = new DecideFold();
    for (const e of log.events) fold.apply(e);
    const restored = DecideFold.restore(JSON.parse(JSON.stringify(fold.snapshot())) as ReturnType<DecideFold['snapshot']>);
    expect(restored.state()).toEqual(fold.state());
    const { outcome: _, ...old } = fold.snapshot();
    expect(DecideFold.restore(old).state().outcome).toEqual({ active: null, worked: false, evaluating: null, evaluationInterrupted: false });
  });
});

describe('the grader', () => {
  it('reads a JSON verdict, and an answer that is none as failed', () => {
    expect(parseVerdict('Sure. {"result": "needs_revision", "explanation": "line 2 is long"}')).toEqual({ result: 'needs_revision', explanation: 'line 2 is long' });
    expect(parseVerdict('looks good to me').result).toBe('failed');
    expect(parseVerdict('{"result": "great"}').result).toBe('failed');
  });

  it('turns a revision asked on the last iteration into max_iterations_reached', () => {
    expect(verdictResult('needs_revision', 0, 3)).toBe('needs_revision');
    expect(verdictResult('needs_revision', 2, 3)).toBe('max_iterations_reached');
    expect(verdictResult('satisfied', 2, 3)).toBe('satisfied');
  });

  it('sees only the agent\'s work since the outcome was defined', () => {
    const log = new Log();
    log.add({ type: 'user.message', content: [{ type: 'text', text: 'before' }] });
    const d = log.define();
    log.turn('after');
    const work = agentWork(log.events, d.seq);
    expect(work).toContain('after');
    expect(work).not.toContain('before');
  });
});
