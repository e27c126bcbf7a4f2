import 'server-only';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID, type SessionAgent, sessionAgentOf } from '~/lib/agent';
import type { StoredEvent } from '~/lib/events';
import { foldUsage } from '~/lib/usage';
import type { Runtime } from '~/server/runtime';
import type { Session } from '~/server/session/store';

/** What a session's log adds to its row: token totals and time spent running. */
const ACCOUNTED = ['span.model_request_end', 'session.status_running', 'session.status_idle', 'session.status_terminated', 'session.status_rescheduled'];

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

/** A session as the Managed Agents API returns it. */
export async function sessionObject(rt: Pick<Runtime, 'store' | 'agents' | 'repositories'>, s: Session) {
  const events = await rt.store.getEvents(s.id, { types: ACCOUNTED });
  const { usage, stats } = accountLog(events, s.created_at, Date.now());
  // Sessions made before agents existed run the built-in default.
  const agent: SessionAgent = s.agent ?? sessionAgentOf(await rt.agents.getAgent(DEFAULT_AGENT_ID));
  return {
    id: s.id,
    type: 'session' as const,
    status: s.status,
    title: s.title,
    metadata: s.metadata,
    agent,
    environment_id: s.environment_id ?? DEFAULT_ENVIRONMENT_ID,
    // Never a token: the store keeps those sealed and returns resources without them.
    resources: await rt.repositories.list(s.id),
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
