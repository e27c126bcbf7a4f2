import type { Caller } from '~/server/access/access';
import { WORK_ITEM_SCOPES, type WorkItemScope, refusedWorkItemScope } from '~/server/access/work-item-scope';
import type { SessionStore } from '~/server/session/store';

const isWorkItemScope = (s: string | undefined): s is WorkItemScope => (WORK_ITEM_SCOPES as readonly (string | undefined)[]).includes(s);

/**
 * Who besides an API key a `/v1` route lets in. An environment key opens only the routes that say
 * so, and only under its own environment (`:id` of `environments/:id/work…`); a work item's token
 * opens its own item's routes (`item`: `:id` its environment, `:wid` the item) or its session's
 * (`session`: `:id` the session).
 */
export interface RouteCallers {
  environmentKey?: boolean;
  /**
   * `item`, `session`: as above. `session_memory` (reads) / `session_memory_write`: `:id` is a memory
   * store attached to the item's session (read-write for a write); `session_skill`: `:id` is a skill
   * of the session's agent or its subagents. Those three are decided by `refusedWorkItemScope`
   * (work-item-scope.ts), which reads the session.
   */
  workItem?: 'item' | 'session' | WorkItemScope;
  /** False: an API key is refused (the worker's own routes, which take the environment key). */
  apiKey?: boolean;
}

/** Why this caller may not use the route (with these params), or null when it may. */
export function refusedCaller(callers: RouteCallers | undefined, caller: Caller, params: Readonly<Record<string, string>>): string | null {
  switch (caller.kind) {
    case 'api_key':
      return callers?.apiKey === false ? 'this route takes the environment key (a worker polls with it), not an API key' : null;
    case 'environment_key':
      if (!callers?.environmentKey) return "an environment key opens only its environment's work routes (/v1/environments/{id}/work…)";
      return params.id === caller.environmentId ? null : `this environment key belongs to environment ${caller.environmentId}, not ${params.id ?? '(none)'}`;
    case 'work_item':
      switch (callers?.workItem) {
        case 'item':
          return params.id === caller.environmentId && params.wid === caller.workId ? null : `a work item's token opens only work item ${caller.workId}`;
        case 'session':
          return caller.sessionId !== null && params.id === caller.sessionId ? null : `a work item's token opens only its own session${caller.sessionId ? ` (${caller.sessionId})` : ''}`;
        case 'session_memory':
        case 'session_memory_write':
        case 'session_skill':
          // Then decided by what the session holds (refusedWorkItemScope).
          return caller.sessionId !== null ? null : "a work item's token without a session opens no store or skill";
        case undefined:
          return "a work item's token opens only its item's heartbeat and stop, its session's reads and tool results, and its session's memory stores and skills";
      }
      break;
    case 'owner':
    case 'viewer':
    case 'visitor':
    case 'anonymous':
      return 'invalid or missing API key';
  }
  return 'not allowed';
}

/**
 * The one check of who may use a `/v1` route: `refusedCaller`, then, for a work item's token on a
 * store's or a skill's route, what its session holds now (read from the store).
 */
export async function refusedRouteCaller(callers: RouteCallers | undefined, caller: Caller, params: Readonly<Record<string, string>>, store: Pick<SessionStore, 'getSession'>): Promise<string | null> {
  const refused = refusedCaller(callers, caller, params);
  if (refused !== null || caller.kind !== 'work_item' || caller.sessionId === null || !isWorkItemScope(callers?.workItem)) return refused;
  return refusedWorkItemScope(store, callers.workItem, caller.sessionId, params.id);
}
