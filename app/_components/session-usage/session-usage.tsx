'use client';
import { useMemo } from 'react';
import type { StoredEvent } from '~/lib/events';
import type { BudgetLimit } from '~/lib/budget-limit';
import { estimateCost, foldUsage } from '~/lib/usage';
import '~/app/_components/session-usage/session-usage.css';

const compact = (n: number) => (n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1_000 ? `${(n / 1_000).toFixed(1)}k` : String(n));

const dollars = (cents: string) => `$${(Number(cents) / 100).toFixed(2)}`;

/** The session's token totals and what they would cost at the model's list price (an estimate), against its budget when it has one. */
export function SessionUsage({ events, model, budget = null }: { events: readonly StoredEvent[]; model: string | null; budget?: BudgetLimit | null }) {
  const usage = useMemo(() => foldUsage(events), [events]);
  const reached = useMemo(() => events.some((e) => e.type === 'session.status_idle' && e.stop_reason.type === 'budget_reached'), [events]);
  const cap = budget ? (
    <span className={reached ? 'usage-budget reached' : 'usage-budget'} data-testid="session-budget">
      {' '}
      · budget {dollars(budget.max_list_cost.amount)}
      {reached && ' reached'}
    </span>
  ) : null;
  if (usage.requests === 0) return cap && <span className="brain usage">{cap}</span>;
  const cost = model ? estimateCost(model, usage) : null;
  const input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const cached = input > 0 ? Math.round((usage.cache_read_input_tokens / input) * 100) : 0;
  return (
    <span className="brain usage" data-testid="session-usage" title={`${usage.requests} model requests; cost at list prices, an estimate`}>
      tokens: in {compact(usage.input_tokens)} · out {compact(usage.output_tokens)}
      {/* The cache figures are the first to go on a narrow line (the title keeps the totals). */}
      <span className="usage-cache">
        {' '}
        · cache read {compact(usage.cache_read_input_tokens)} ({cached}% of input) · cache write {compact(usage.cache_creation_input_tokens)}
      </span>
      {cost !== null && <> · ≈ ${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}</>}
      {cap}
    </span>
  );
}
