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

/** Sums every model request of a log: each turn's span end, and each compaction's summary request (pure). */
export function foldUsage(events: readonly StoredEvent[]): UsageTotals {
  const t: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, requests: 0 };
  for (const e of events) {
    const u = e.type === 'span.model_request_end' ? e.model_usage : e.type === 'agent.thread_context_compacted' ? e.model_usage : undefined;
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
