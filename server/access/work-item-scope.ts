import 'server-only';
import { memoryResourcesOf } from '~/server/memory/session-memory';
import type { SessionStore } from '~/server/session/store';

/** A work item's token on a store's or a skill's route: allowed by what its session holds. */
export const WORK_ITEM_SCOPES = ['session_memory', 'session_memory_write', 'session_skill'] as const;
export type WorkItemScope = (typeof WORK_ITEM_SCOPES)[number];

/**
 * What a work item's token may reach beyond its session, as the SDK's worker needs it: the memory
 * stores attached to its session (a read-only one for reads only) and the skills of its session's
 * agent and subagents. Null when allowed, else why not. Read from the session as stored now, so a
 * store or skill the session does not hold is refused even with a live token.
 */
export async function refusedWorkItemScope(store: Pick<SessionStore, 'getSession'>, scope: WorkItemScope, sessionId: string, id: string | undefined): Promise<string | null> {
  const session = await store.getSession(sessionId);
  switch (scope) {
    case 'session_memory':
    case 'session_memory_write': {
      const attached = memoryResourcesOf(session?.resources ?? []).find((r) => r.memory_store_id === id);
      if (!attached) return `a work item's token opens only the memory stores of session ${sessionId}`;
      if (scope === 'session_memory_write' && attached.access === 'read_only') return `memory store ${id} is read-only in session ${sessionId}`;
      return null;
    }
    case 'session_skill':
      return id !== undefined && skillIdsOf(session?.agent).has(id) ? null : `a work item's token opens only the skills of session ${sessionId}'s agent`;
  }
}

/** Every `skills[].skill_id` in an agent snapshot, its subagents' (however the roster nests them) included. */
export function skillIdsOf(agent: unknown): Set<string> {
  const ids = new Set<string>();
  const walk = (v: unknown, depth: number) => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.skills)) for (const s of o.skills) if (s && typeof s === 'object' && typeof (s as { skill_id?: unknown }).skill_id === 'string') ids.add((s as { skill_id: string }).skill_id);
    for (const [k, x] of Object.entries(o)) if (k !== 'skills') walk(x, depth + 1);
  };
  walk(agent, 0);
  return ids;
}
