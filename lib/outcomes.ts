import type { StoredEvent } from '~/lib/events';

/** The event types `outcomeEvaluations` reads (a session object asks the store for these only). */
export const OUTCOME_EVENT_TYPES = ['user.define_outcome', 'span.outcome_evaluation_start', 'span.outcome_evaluation_end', 'user.interrupt'] as const;

/** An outcome as the session object lists it (`outcome_evaluations`, the API's shape). */
export interface OutcomeEvaluation {
  type: 'outcome_evaluation';
  outcome_id: string;
  description: string;
  /** `running` while the agent works, `evaluating` while the grader does; the rest are final. */
  result: 'running' | 'evaluating' | 'satisfied' | 'max_iterations_reached' | 'failed' | 'interrupted';
  iteration: number;
  explanation: string | null;
  completed_at: string | null;
}

/** Each outcome of a log, where it stands (pure): the same reading of the log the harness makes. */
export function outcomeEvaluations(events: readonly StoredEvent[]): OutcomeEvaluation[] {
  const all: OutcomeEvaluation[] = [];
  const open = (): OutcomeEvaluation | undefined => all.findLast((o) => o.completed_at === null);
  const end = (o: OutcomeEvaluation, result: OutcomeEvaluation['result'], at: string) => {
    o.result = result;
    o.completed_at = at;
  };
  for (const e of events) {
    switch (e.type) {
      case 'user.define_outcome': {
        // A newer outcome replaces the one being worked on, as in the harness.
        const current = open();
        if (current) end(current, 'interrupted', e.processed_at);
        all.push({ type: 'outcome_evaluation', outcome_id: e.outcome_id, description: e.description, result: 'running', iteration: 0, explanation: null, completed_at: null });
        break;
      }
      case 'span.outcome_evaluation_start': {
        const o = all.find((x) => x.outcome_id === e.outcome_id);
        if (o && o.completed_at === null) {
          o.result = 'evaluating';
          o.iteration = e.iteration;
        }
        break;
      }
      case 'span.outcome_evaluation_end': {
        const o = all.find((x) => x.outcome_id === e.outcome_id);
        if (!o) break;
        o.explanation = e.explanation;
        o.iteration = e.iteration;
        if (e.result === 'needs_revision') {
          o.result = 'running';
          o.iteration = e.iteration + 1;
        } else end(o, e.result, e.processed_at);
        break;
      }
      case 'user.interrupt': {
        // An interrupt while the grader works ends in its own span end; while the agent works, here.
        const o = open();
        if (o && o.result === 'running') end(o, 'interrupted', e.processed_at);
        break;
      }
      default:
        break;
    }
  }
  return all;
}
