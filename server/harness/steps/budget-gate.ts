import 'server-only';
import { budgetReached, listCostCents, sessionUsageEvent } from '~/lib/budget';
import type { NewEvent } from '~/lib/events';
import { foldUsage } from '~/lib/usage';
import type { StepContext } from '~/server/harness/steps/step-context';

/**
 * The budget's one check, before a model request starts: a session with a budget whose list cost
 * (at `model`'s list price, over every request of its log) is at or past its cap, or whose model
 * has no list price, does not ask. It stores its usage and idles with `budget_reached` (after
 * `running`, the status a first step stores with its request) and the step ends. True: stopped.
 */
export async function budgetStop(ctx: StepContext, model: string, running: readonly NewEvent[]): Promise<boolean> {
  const budget = await ctx.read('budget', () => ctx.budget());
  if (!budget) return false;
  const totals = foldUsage(await ctx.read('usage', () => ctx.usageEvents()));
  const cents = listCostCents(model, totals);
  if (!budgetReached(budget, cents)) return false;
  // Only if nothing arrived since the view was read: a message meanwhile is decided on again first.
  await ctx.write.ifLogEndsAt(ctx.view.lastSeq, [...running, sessionUsageEvent(totals, cents, budget), { type: 'session.status_idle', stop_reason: { type: 'budget_reached' }, stop_details: null }]);
  return true;
}
