import type { StoredEvent } from '~/lib/events';

/** A session's model usage so far, by kind. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** Model requests counted (turns and compaction summaries). */
  requests: number;
}

/** Sums every model request of a log: each turn's span end, each compaction's summary request and each outcome evaluation's grader request (pure). */
/** The events that carry a model request's usage (foldUsage's input): the agent's, compaction's and the grader's. */
export const USAGE_EVENT_TYPES: string[] = ['span.model_request_end', 'span.outcome_evaluation_end', 'agent.thread_context_compacted'];

export function foldUsage(events: readonly StoredEvent[]): UsageTotals {
  const t: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, requests: 0 };
  for (const e of events) {
    // The grader's requests count as the agent's do.
    const u = e.type === 'span.model_request_end' || e.type === 'agent.thread_context_compacted' ? e.model_usage : e.type === 'span.outcome_evaluation_end' ? e.usage : undefined;
    if (!u) continue;
    t.input_tokens += u.input_tokens;
    t.output_tokens += u.output_tokens;
    t.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
    t.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
    t.requests += 1;
  }
  return t;
}

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/**
 * List prices by model family (Anthropic's published per-million-token prices for the current
 * generation of each family); cache writes cost 1.25× input (5-minute entries), cache reads 0.1×.
 * A model id this table does not know gets no estimate rather than a wrong one.
 */
const FAMILIES: Array<{ match: RegExp; price: Price }> = [
  { match: /opus/i, price: { input: 5, output: 25 } },
  { match: /sonnet/i, price: { input: 3, output: 15 } },
  { match: /haiku/i, price: { input: 1, output: 5 } },
];

export function priceFor(model: string): Price | null {
  return FAMILIES.find((f) => f.match.test(model))?.price ?? null;
}

/** The cost of `usage` at `model`'s list price, in dollars; null for a model without a known price. */
export function estimateCost(model: string, usage: UsageTotals): number | null {
  const p = priceFor(model);
  if (!p) return null;
  const perToken = (dollarsPerMTok: number) => dollarsPerMTok / 1_000_000;
  return (
    usage.input_tokens * perToken(p.input) +
    usage.cache_creation_input_tokens * perToken(p.input * 1.25) +
    usage.cache_read_input_tokens * perToken(p.input * 0.1) +
    usage.output_tokens * perToken(p.output)
  );
}

/** What a session's log adds to its row: token totals and time spent running. */
export const ACCOUNTED: string[] = ['span.model_request_end', 'span.outcome_evaluation_end', 'agent.thread_context_compacted', 'session.status_running', 'session.status_idle', 'session.status_terminated', 'session.status_rescheduled'];

export interface SessionUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Sums the model usage of a log and the seconds it spent running (pure). */
export function accountLog(events: readonly StoredEvent[], createdAt: string, now: number): { usage: SessionUsage; stats: { active_seconds: number; duration_seconds: number } } {
  // Every model request: turns and compaction summaries. The Messages API reports cache writes
  // without their lifetime there: Paddock writes 5-minute entries.
  const t = foldUsage(events);
  const usage: SessionUsage = {
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    cache_read_input_tokens: t.cache_read_input_tokens,
    cache_creation: { ephemeral_5m_input_tokens: t.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
  };
  let activeMs = 0;
  let runningSince: number | null = null;
  for (const e of events) {
    const at = Date.parse(e.processed_at);
    switch (e.type) {
      case 'session.status_running':
      case 'session.status_rescheduled':
        runningSince ??= at;
        break;
      case 'session.status_idle':
      case 'session.status_terminated':
        if (runningSince !== null) activeMs += at - runningSince;
        runningSince = null;
        break;
      default:
        break;
    }
  }
  if (runningSince !== null) activeMs += now - runningSince;
  // To the millisecond: a quick turn (a fast model, a short tool) still counts as time spent running.
  const round = (ms: number) => Math.max(0, Math.round(ms) / 1000);
  return { usage, stats: { active_seconds: round(activeMs), duration_seconds: round(now - Date.parse(createdAt)) } };
}
