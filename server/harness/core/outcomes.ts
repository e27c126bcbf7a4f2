import { DEFAULT_OUTCOME_ITERATIONS, type StoredEvent } from '~/lib/events';

/**
 * Outcomes in the harness's fold (pure): the outcome the agent works toward, whether a finished
 * turn waits for the grader, and an evaluation left open (by a crash, or cut by an interrupt).
 * decide() turns this into `evaluate_outcome` / `end_evaluation` actions.
 */

/** What the grader needs of an outcome: kept in the fold, so a wake needs no read of its event. */
export interface ActiveOutcome {
  outcome_id: string;
  description: string;
  rubric: string;
  max_iterations: number;
  /** The iteration the agent is on (0-indexed): the next evaluation's. */
  iteration: number;
  /** The seq of its `user.define_outcome`: the agent's work is what follows it. */
  defined_seq: number;
}

/** An evaluation whose span started and has not ended. */
export interface OpenEvaluation {
  start_id: string;
  outcome_id: string;
  iteration: number;
}

export interface OutcomeState {
  active: ActiveOutcome | null;
  /** A model turn finished since the outcome was defined or last graded: the next idle grades it first. */
  worked: boolean;
  evaluating: OpenEvaluation | null;
  /** The user interrupted the open evaluation: it ends as `interrupted`, never graded. */
  evaluationInterrupted: boolean;
}

export type OutcomeFoldSnapshot = OutcomeState;

export class OutcomeFold {
  private s: OutcomeState = { active: null, worked: false, evaluating: null, evaluationInterrupted: false };

  static restore(s: OutcomeFoldSnapshot | undefined): OutcomeFold {
    const f = new OutcomeFold();
    // A checkpoint from before outcomes has none open.
    if (s) f.s = structuredClone(s);
    return f;
  }

  snapshot(): OutcomeFoldSnapshot {
    return structuredClone(this.s);
  }

  apply(e: StoredEvent): void {
    const s = this.s;
    switch (e.type) {
      case 'user.define_outcome':
        // A newer outcome replaces the one being worked on.
        s.active = {
          outcome_id: e.outcome_id,
          description: e.description,
          rubric: e.rubric.type === 'text' ? e.rubric.content : `(file ${e.rubric.file_id})`,
          max_iterations: e.max_iterations ?? DEFAULT_OUTCOME_ITERATIONS,
          iteration: 0,
          defined_seq: e.seq,
        };
        s.worked = false;
        break;
      case 'span.model_request_end':
        if (!e.is_error && s.active) s.worked = true;
        break;
      case 'span.outcome_evaluation_start':
        s.evaluating = { start_id: e.id, outcome_id: e.outcome_id, iteration: e.iteration };
        s.evaluationInterrupted = false;
        if (s.active?.outcome_id === e.outcome_id) s.worked = false;
        break;
      case 'span.outcome_evaluation_end':
        if (s.evaluating?.start_id === e.outcome_evaluation_start_id) {
          s.evaluating = null;
          s.evaluationInterrupted = false;
        }
        if (s.active?.outcome_id !== e.outcome_id) break;
        // needs_revision: another iteration; anything else ends the outcome (max_iterations_reached
        // still gets the agent's one last turn, with nothing graded after it).
        if (e.result === 'needs_revision') {
          s.active.iteration = e.iteration + 1;
          s.worked = false;
        } else s.active = null;
        break;
      case 'user.interrupt':
        // Stop means stop: an evaluation in progress ends as interrupted, and an outcome being
        // worked on is given up (the session object shows it interrupted).
        if (s.evaluating) s.evaluationInterrupted = true;
        s.active = null;
        s.worked = false;
        break;
      default:
        break;
    }
  }

  state(): OutcomeState {
    return this.s;
  }
}

/** The grader's verdict as the end span stores it: a revision asked past the budget is `max_iterations_reached`. */
export function verdictResult(verdict: 'satisfied' | 'needs_revision' | 'failed', iteration: number, maxIterations: number): 'satisfied' | 'needs_revision' | 'failed' | 'max_iterations_reached' {
  if (verdict === 'needs_revision' && iteration + 1 >= maxIterations) return 'max_iterations_reached';
  return verdict;
}
