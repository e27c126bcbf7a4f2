import 'server-only';
import type { z } from 'zod';
import { DEFAULT_AGENT_ID, type SessionAgent, type SessionUpdateParams, patchMetadata, sessionAgentOf } from '~/lib/agent';
import { ConflictError, InvalidInputError } from '~/lib/errors';
import type { NewEventOf } from '~/lib/events';
import { normalizeTools } from '~/lib/toolset';
import { type BudgetLimit, listCostCents } from '~/lib/budget';
import { USAGE_EVENT_TYPES, foldUsage } from '~/lib/usage';
import type { SessionDeps } from '~/server/commands/session-deps';
import type { Session, SessionPatch, SessionStore } from '~/server/session/store';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What an update changes of a session: the patch to store, and the `session.updated` event that
 * says so, with only the fields that changed (null: nothing did). Refusals come before anything
 * is written: the agent of a running session, a vault that does not exist, a budget added later.
 */
/** A replaced budget must stay above what the session has already spent (as the hosted API: budget_not_raised). */
async function requireRaised(store: Pick<SessionStore, 'getEvents'>, session: Session, budget: BudgetLimit): Promise<void> {
  const model = session.agent?.model.id;
  const spent = model ? listCostCents(model, foldUsage(await store.getEvents(session.id, { types: USAGE_EVENT_TYPES }))) : null;
  if (spent === null) throw new InvalidInputError(`budget: model ${model ?? '(default)'} has no list price, so a budget cannot measure it (model_not_budgetable)`);
  if (Number(budget.max_list_cost.amount) <= spent) throw new InvalidInputError(`budget: max_list_cost must be above the ${spent} cents already spent (budget_not_raised)`);
}

export async function sessionChanges(d: Pick<SessionDeps, 'agents' | 'vaults' | 'store'>, s: Session, p: z.output<typeof SessionUpdateParams>): Promise<{ patch: SessionPatch; event: NewEventOf<'session.updated'> | null }> {
  const patch: SessionPatch = {};
  const event: NewEventOf<'session.updated'> = { type: 'session.updated' };
  if (p.title && p.title !== s.title) {
    patch.title = p.title;
    event.title = p.title;
  }
  if (p.metadata !== undefined) {
    const metadata = patchMetadata(s.metadata, p.metadata);
    if (!same(metadata, s.metadata)) {
      patch.metadata = metadata;
      // The API's rule: the whole bag when it is not empty, nothing when it was cleared.
      if (Object.keys(metadata).length > 0) event.metadata = metadata;
    }
  }
  if (p.agent && (p.agent.tools !== undefined || p.agent.mcp_servers !== undefined)) {
    if (s.status === 'running' || s.status === 'rescheduling') throw new ConflictError(`session ${s.id} is running: its agent changes only while it is idle (interrupt it first)`);
    const cur: SessionAgent = s.agent ?? sessionAgentOf(await d.agents.getAgent(DEFAULT_AGENT_ID));
    const next: SessionAgent = {
      ...cur,
      ...(p.agent.tools !== undefined ? { tools: normalizeTools(p.agent.tools) } : {}),
      ...(p.agent.mcp_servers !== undefined ? { mcp_servers: p.agent.mcp_servers } : {}),
    };
    if (!same(next, cur)) {
      patch.agent = next;
      event.agent = next;
    }
  }
  if (p.vault_ids !== undefined && !same(p.vault_ids, s.vault_ids)) {
    await d.vaults.requireUsableVaults(p.vault_ids);
    patch.vault_ids = p.vault_ids;
    event.vault_ids = p.vault_ids;
  }
  if (p.budget !== undefined) {
    // As the hosted API: a budget is set at creation; an update replaces or removes it, never adds
    // one, and a replaced one must be above what is already spent (the same one again too).
    if (p.budget !== null && s.budget === null) throw new InvalidInputError('budget: a budget can only be set when the session is created (budget_create_only)');
    if (p.budget !== null) await requireRaised(d.store, s, p.budget);
    if (!same(p.budget, s.budget)) {
      // Raising the ceiling lets an idle session at its budget go on with the next message.
      patch.budget = p.budget;
      event.budget = p.budget;
    }
  }
  return { patch, event: Object.keys(patch).length > 0 ? event : null };
}
