import type Anthropic from '@anthropic-ai/sdk';
import { estimateTokens } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import type { ModelRequest } from '~/server/harness/core/context';

/** What the model is asked when its context is compacted. */
export const COMPACTION_PROMPT = `[Paddock: your context is nearly full. Write a summary that will replace everything above in your context; the full log stays available through the session_events tool.
Keep: the task and every instruction the user gave; decisions made and why; the current state of the work (files changed, commands that matter, what succeeded, what failed); open questions; and exactly what to do next.
Name facts precisely (paths, names, numbers, errors). Write only the summary, no tool calls.]`;

/** The request's input, estimated in tokens (its system prompt, tools and messages). */
export function requestTokens(request: ModelRequest): number {
  return estimateTokens(JSON.stringify(request.system ?? '')) + estimateTokens(JSON.stringify(request.tools ?? [])) + estimateTokens(JSON.stringify(request.messages));
}

/**
 * How far off the estimate runs for this session: the newest answered request's reported input
 * (uncached, cache reads and writes) over what was estimated when it was built, in quarter steps
 * (so the window's budget, and with it the request prefix, does not shift with every turn), within
 * 0.5–3. 1 until a request has been answered.
 */
export function tokenScale(events: readonly StoredEvent[]): number {
  const fold = new ScaleFold();
  for (const e of events) fold.apply(e);
  return fold.value;
}

/** `tokenScale` one event at a time (the harness keeps it in its checkpoint); only open spans' estimates are kept. */
export class ScaleFold {
  value = 1;
  private estimated = new Map<string, number>();

  static restore(s: ScaleFoldSnapshot): ScaleFold {
    const f = new ScaleFold();
    f.value = s.value;
    f.estimated = new Map(s.open);
    return f;
  }

  snapshot(): ScaleFoldSnapshot {
    return { value: this.value, open: [...this.estimated] };
  }

  apply(e: StoredEvent): void {
    if (e.type === 'span.model_request_start' && e.estimated_input_tokens) this.estimated.set(e.id, e.estimated_input_tokens);
    if (e.type !== 'span.model_request_end') return;
    const est = this.estimated.get(e.model_request_start_id);
    this.estimated.delete(e.model_request_start_id);
    if (e.is_error) return;
    const u = e.model_usage;
    const actual = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    if (est && actual > 0) this.value = Math.min(3, Math.max(0.5, Math.round((actual / est) * 4) / 4));
  }
}

export interface ScaleFoldSnapshot {
  value: number;
  open: [string, number][];
}

/**
 * Whether to compact before a request of `tokens` input tokens: it is over the trigger, and
 * something happened since the last compaction (compacting a summary with nothing new would only loop).
 */
export function shouldCompact(tokens: number, events: readonly StoredEvent[], triggerTokens: number): boolean {
  if (tokens <= triggerTokens) return false;
  const last = events.at(-1);
  const lastCompaction = [...events].reverse().find((e) => e.type === 'agent.thread_context_compacted');
  return last !== undefined && last !== lastCompaction;
}

/**
 * The summary request: the same prefix (tools, system, history: read from the cache) and the
 * compaction prompt after the last user content; no tool calls.
 */
export function compactionRequest(request: ModelRequest): ModelRequest {
  const messages = structuredClone(request.messages);
  const prompt: Anthropic.Messages.TextBlockParam = { type: 'text', text: COMPACTION_PROMPT };
  const last = messages.at(-1);
  if (last?.role === 'user') last.content = [...(typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content), prompt];
  else messages.push({ role: 'user', content: [prompt] });
  return { ...request, messages, tool_choice: { type: 'none' } };
}
