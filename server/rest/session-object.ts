import 'server-only';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID, type SessionAgent, sessionAgentOf } from '~/lib/agent';
import { ACCOUNTED, accountLog } from '~/lib/usage';
import { listResources } from '~/server/commands/resource-commands';
import { aggregateStatus } from '~/server/commands/thread-commands';
import { memoryResourcesOf } from '~/server/memory/session-memory';
import type { Runtime } from '~/server/runtime';
import type { Session } from '~/server/session/store';

/** A session as the Managed Agents API returns it. */
export async function sessionObject(rt: Pick<Runtime, 'store' | 'agents' | 'repositories' | 'sessionFiles'>, s: Session) {
  const events = await rt.store.getEvents(s.id, { types: ACCOUNTED });
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
    resources: [...(await listResources(rt, s.id)), ...memoryResourcesOf(s.resources)],
    vault_ids: s.vault_ids,
    budget: null,
    outcome_evaluations: [],
    usage,
    stats,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}
