import type { BudgetLimit } from '~/lib/budget-limit';
import { type UsageTotals, estimateCost } from '~/lib/usage';

export { BudgetLimit } from '~/lib/budget-limit';

export interface MonetaryAmount {
  amount: string;
  currency: 'USD';
}

/**
 * What a session's model requests cost at list price, in whole cents rounded up (so the cap fires
 * no later than the charge); null when the model has no list price (the budget cannot measure it).
 */
export function listCostCents(model: string, usage: UsageTotals): number | null {
  const dollars = estimateCost(model, usage);
  if (dollars === null) return null;
  // Float noise below a millionth of a cent is not spend.
  return Math.ceil(dollars * 100 - 1e-6);
}

export function listCost(cents: number): MonetaryAmount {
  return { amount: String(Math.max(0, cents)), currency: 'USD' };
}

/** True when no new model request may start: spend at or past the cap, or a model the budget cannot price. */
export function budgetReached(budget: BudgetLimit, spentCents: number | null): boolean {
  return spentCents === null || spentCents >= Number(budget.max_list_cost.amount);
}

/**
 * The one `session.usage` event Paddock stores: the session's cumulative usage, its list cost when
 * its model has a list price, and its budget then (pure; every emitter builds it here).
 */
export function sessionUsageEvent(totals: UsageTotals, spentCents: number | null, budget: BudgetLimit | null) {
  return {
    type: 'session.usage' as const,
    usage: {
      input_tokens: totals.input_tokens,
      output_tokens: totals.output_tokens,
      cache_read_input_tokens: totals.cache_read_input_tokens,
      cache_creation: { ephemeral_5m_input_tokens: totals.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
      ...(spentCents !== null ? { list_cost: listCost(spentCents) } : {}),
    },
    budget,
  };
}
