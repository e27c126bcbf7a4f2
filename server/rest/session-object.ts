import 'server-only';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID, type SessionAgent, sessionAgentOf } from '~/lib/agent';
import { ACCOUNTED, accountLog } from '~/lib/usage';
import { OUTCOME_EVENT_TYPES, outcomeEvaluations } from '~/lib/outcomes';
import { listResources } from '~/server/commands/resource-commands';
import { aggregateStatus } from '~/server/commands/thread-commands';
import type { Runtime } from '~/server/runtime';
import type { Session } from '~/server/session/store';

/** A session as the Managed Agents API returns it. */
export async function sessionObject(rt: Pick<Runtime, 'store' | 'agents' | 'repositories' | 'sessionFiles'>, s: Session) {
  const [events, outcomeEvents] = await Promise.all([rt.store.getEvents(s.id, { types: ACCOUNTED }), rt.store.getEvents(s.id, { types: [...OUTCOME_EVENT_TYPES] })]);
  const { usage, stats } = accountLog(events, s.created_at, Date.now());
  // Sessions made before agents existed run the built-in default.
  const agent: SessionAgent = s.agent ?? sessionAgentOf(await rt.agents.getAgent(DEFAULT_AGENT_ID));
  return {
    id: s.id,
    type: 'session' as const,
    // With threads (multiagent), any thread running makes the session running.
    status: await aggregateStatus(rt.store, s),
    title: s.title,
    metadata: s.metadata,
    agent,
    environment_id: s.environment_id ?? DEFAULT_ENVIRONMENT_ID,
    // Never a token: the store keeps those sealed and returns resources without them.
    resources: await listResources(rt, s.id),
    vault_ids: s.vault_ids,
    budget: s.budget,
    outcome_evaluations: outcomeEvaluations(outcomeEvents),
    usage,
    stats,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}
