import type Anthropic from '@anthropic-ai/sdk';
import type { StoredEventOf } from '~/lib/events';

type TextBlockParam = Anthropic.Messages.TextBlockParam;

/**
 * What the agent is shown of its outcome (pure): the outcome and its rubric when it is defined,
 * and the grader's explanation when it asks for a revision or the budget ran out. Other verdicts
 * end the outcome without another turn, so the agent is shown nothing of them.
 */
export function outcomeBlocks(e: StoredEventOf<'user.define_outcome'> | StoredEventOf<'span.outcome_evaluation_end'>): TextBlockParam[] {
  if (e.type === 'user.define_outcome') {
    const rubric = e.rubric.type === 'text' ? e.rubric.content : `(the rubric is in file ${e.rubric.file_id})`;
    return [{ type: 'text', text: `[Outcome to achieve. A grader will evaluate your work against the rubric when you finish.]\n${e.description}\n\n[Rubric]\n${rubric}` }];
  }
  switch (e.result) {
    case 'needs_revision':
      return [{ type: 'text', text: `[The grader evaluated your work (iteration ${e.iteration}): it needs revision.]\n${e.explanation}\n\n[Revise your work to meet the rubric.]` }];
    case 'max_iterations_reached':
      return [{ type: 'text', text: `[The grader evaluated your work (iteration ${e.iteration}): it still needs revision, and no evaluations are left.]\n${e.explanation}\n\n[Acknowledge this briefly and stop.]` }];
    case 'satisfied':
    case 'failed':
    case 'interrupted':
      return [];
  }
}
