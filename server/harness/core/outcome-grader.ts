import type { StoredEvent } from '~/lib/events';
import type { ModelRequest } from '~/server/harness/core/context';
import type { ActiveOutcome } from '~/server/harness/core/outcomes';

/**
 * The grader's request and how its answer is read (pure). The grader has its own context: the
 * outcome, its rubric and what the agent produced since the outcome was defined, never the
 * agent's system prompt or tools.
 */

export const GRADER_SYSTEM = `You are a strict grader. You judge whether an agent's work meets an outcome's rubric.
Answer with one JSON object and nothing else: {"result": "satisfied" | "needs_revision" | "failed", "explanation": "..."}.
"satisfied": every criterion of the rubric is met. "needs_revision": some criterion is not met; say which and what to change.
"failed": the rubric cannot apply to what was produced (say why).`;

/** What of the agent's work the grader sees, at most (the newest part is kept). */
const MAX_WORK_CHARS = 100_000;
const MAX_BLOCK_CHARS = 8_000;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n[… ${text.length - max} more characters]` : text;
}

/** The agent's work since the outcome was defined, as plain text: its messages, its calls and their results. */
export function agentWork(events: readonly StoredEvent[], definedSeq: number): string {
  const parts: string[] = [];
  for (const e of events) {
    if (e.seq <= definedSeq) continue;
    switch (e.type) {
      case 'agent.message':
        parts.push(`[agent]\n${e.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')}`);
        break;
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
      case 'agent.custom_tool_use':
        parts.push(`[tool call ${e.name}]\n${clip(JSON.stringify(e.input), MAX_BLOCK_CHARS)}`);
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'user.custom_tool_result':
      case 'agent.mcp_tool_result':
        parts.push(`[tool result${e.is_error ? ', error' : ''}]\n${clip((e.content ?? []).map((c) => (c.type === 'text' ? c.text : `(${c.type})`)).join('\n'), MAX_BLOCK_CHARS)}`);
        break;
      case 'user.message':
        parts.push(`[user]\n${e.content.map((b) => (b.type === 'text' ? b.text : `(${b.type})`)).join('\n')}`);
        break;
      case 'span.outcome_evaluation_end':
        parts.push(`[earlier evaluation, iteration ${e.iteration}: ${e.result}]\n${e.explanation}`);
        break;
      default:
        break;
    }
  }
  const all = parts.join('\n\n');
  return all.length > MAX_WORK_CHARS ? `[… the start is left out]\n${all.slice(all.length - MAX_WORK_CHARS)}` : all;
}

export function graderRequest(outcome: ActiveOutcome, work: string, model: string, maxTokens: number): ModelRequest {
  const text = [
    `<outcome>\n${outcome.description}\n</outcome>`,
    `<rubric>\n${outcome.rubric}\n</rubric>`,
    `<agent_work iteration="${outcome.iteration}">\n${work || '(the agent produced nothing)'}\n</agent_work>`,
    'Grade the work against the rubric. Answer with the JSON object only.',
  ].join('\n\n');
  return { model, max_tokens: maxTokens, system: GRADER_SYSTEM, messages: [{ role: 'user', content: [{ type: 'text', text }] }] };
}

export interface Verdict {
  result: 'satisfied' | 'needs_revision' | 'failed';
  explanation: string;
}

const RESULTS = new Set(['satisfied', 'needs_revision', 'failed']);

/** The grader's answer as a verdict; an answer that is not one is `failed`, saying so. */
export function parseVerdict(answer: string): Verdict {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const v = JSON.parse(answer.slice(start, end + 1)) as { result?: unknown; explanation?: unknown };
      if (typeof v.result === 'string' && RESULTS.has(v.result)) {
        return { result: v.result as Verdict['result'], explanation: typeof v.explanation === 'string' ? v.explanation : '' };
      }
    } catch {
      // Not JSON: said below.
    }
  }
  return { result: 'failed', explanation: `The grader's answer was not a verdict: ${clip(answer.trim(), 500)}` };
}
