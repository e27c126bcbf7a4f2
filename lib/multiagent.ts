import { z } from 'zod';

/**
 * An agent's `multiagent` configuration as the Managed Agents API defines it (`@anthropic-ai/sdk`
 * `resources/beta/agents` Multiagent*): the older `coordinator` roster and the newer
 * `multiagent_20261001` shape. Paddock builds session threads (the roster and inline agents, `subagents`); the
 * advisor and workflow runs are refused by name, never silently dropped. The roster's references
 * are resolved (existence, archive, depth 1) by the agent store, which has the database.
 */

/** At most this many agents in a roster. */
export const MAX_ROSTER = 20;

const AgentRef = z.object({ type: z.literal('agent'), id: z.string().min(1).max(128), version: z.number().int().min(1).optional() }).strict();
const SelfRef = z.object({ type: z.literal('self') }).strict();
const AdvisorRef = z.object({ type: z.literal('advisor'), model: z.string().min(1).max(128) }).strict();

/** One roster entry: an agent id, `{type:'agent',id,version?}`, `{type:'self'}` (an advisor: refused). */
export const RosterEntryParams = z.union([z.string().min(1).max(128), AgentRef, SelfRef, AdvisorRef]).superRefine((e, ctx) => {
  if (typeof e === 'object' && e.type === 'advisor') ctx.addIssue({ code: 'custom', message: 'an advisor in the roster is not supported by Paddock (multiagent advisor)' });
});
export type RosterEntryParams = z.output<typeof RosterEntryParams>;

const Roster = z.array(RosterEntryParams).max(MAX_ROSTER, `at most ${MAX_ROSTER} agents`);

const InlineAgents = z.object({ type: z.enum(['enabled', 'disabled']) }).strict();

const CoordinatorParams = z.object({ type: z.literal('coordinator'), agents: Roster.min(1, 'at least 1 agent') }).strict();

const SubagentsParams = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), inline_agents: InlineAgents.nullish(), predefined_agents: Roster.nullish() }).strict(),
  z.object({ type: z.literal('disabled') }).strict(),
]);
const AdvisorParams = z
  .discriminatedUnion('type', [z.object({ type: z.literal('enabled'), model: z.string().min(1).max(128) }).strict(), z.object({ type: z.literal('disabled') }).strict()])
  .superRefine((a, ctx) => {
    if (a.type === 'enabled') ctx.addIssue({ code: 'custom', message: 'the advisor is not supported by Paddock: send {"type":"disabled"} or omit it' });
  });
const WorkflowsParams = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('enabled'), inline_agents: InlineAgents.nullish(), predefined_agents: Roster.nullish() }).strict(),
    z.object({ type: z.literal('disabled') }).strict(),
  ])
  .superRefine((w, ctx) => {
    if (w.type === 'enabled') ctx.addIssue({ code: 'custom', message: 'workflow runs are not supported by Paddock: send {"type":"disabled"} or omit it' });
  });

const Multiagent20261001Params = z
  .object({
    type: z.literal('multiagent_20261001'),
    advisor: AdvisorParams.nullish(),
    subagents: SubagentsParams.nullish(),
    // Null takes the API's default (enabled), which Paddock does not build: refused like enabled.
    workflows: WorkflowsParams.nullable()
      .refine((w) => w !== null, { message: 'workflow runs are not supported by Paddock (null means enabled): send {"type":"disabled"} or omit it' })
      .optional(),
  })
  .strict();

export const MultiagentParams = z.discriminatedUnion('type', [CoordinatorParams, Multiagent20261001Params]);
export type MultiagentParams = z.output<typeof MultiagentParams>;

// ── stored (an agent's) and resolved (a session's) shapes ──

export interface AgentReference {
  type: 'agent';
  id: string;
  version: number;
}
export type InlineAgentsSetting = { type: 'enabled' } | { type: 'disabled' };

export type Multiagent =
  | { type: 'coordinator'; agents: AgentReference[] }
  | {
      type: 'multiagent_20261001';
      advisor: { type: 'disabled' };
      subagents: { type: 'enabled'; inline_agents: InlineAgentsSetting; predefined_agents: AgentReference[] } | { type: 'disabled' };
      workflows: { type: 'disabled' };
    };

/** A session's copy: each roster reference replaced by the agent's definition (SDK `SessionMultiagent`). */
export type SessionMultiagentOf<A> =
  | { type: 'coordinator'; agents: A[] }
  | {
      type: 'multiagent_20261001';
      advisor: { type: 'disabled' };
      subagents: { type: 'enabled'; inline_agents: InlineAgentsSetting; predefined_agents: A[] } | { type: 'disabled' };
      workflows: { type: 'disabled' };
    };

/**
 * The references a roster-resolving caller must check, with what it should become:
 * each entry's id (self: the owner) and version asked for (none: the latest).
 */
export function rosterRequests(entries: readonly RosterEntryParams[], selfId: string | null): { id: string; version?: number; self: boolean }[] {
  const out: { id: string; version?: number; self: boolean }[] = [];
  for (const e of entries) {
    if (typeof e === 'string') out.push({ id: e, self: false });
    else if (e.type === 'agent') out.push({ id: e.id, ...(e.version !== undefined ? { version: e.version } : {}), self: false });
    else if (e.type === 'self') out.push({ id: selfId ?? '', self: true });
  }
  return out;
}

/** The roster an agent's threads may run (its subagents), whatever shape it was given in. */
export function rosterOf(m: Multiagent | null | undefined): AgentReference[] {
  if (!m) return [];
  if (m.type === 'coordinator') return m.agents;
  return m.subagents.type === 'enabled' ? m.subagents.predefined_agents : [];
}

/** Merges a `multiagent_20261001` update into the stored one level by level (the API's rule). */
export function mergeMultiagentParams(stored: Multiagent | null, p: MultiagentParams): MultiagentParams {
  if (p.type !== 'multiagent_20261001' || stored?.type !== 'multiagent_20261001') return p;
  const storedSub = stored.subagents;
  let subagents = p.subagents;
  if (subagents === undefined) subagents = storedSub.type === 'enabled' ? { type: 'enabled', inline_agents: storedSub.inline_agents, predefined_agents: storedSub.predefined_agents } : storedSub;
  else if (subagents !== null && subagents.type === 'enabled' && storedSub.type === 'enabled') {
    subagents = {
      type: 'enabled',
      inline_agents: subagents.inline_agents === undefined ? storedSub.inline_agents : subagents.inline_agents,
      predefined_agents: subagents.predefined_agents === undefined ? storedSub.predefined_agents : subagents.predefined_agents,
    };
  }
  return { type: 'multiagent_20261001', advisor: p.advisor === undefined ? stored.advisor : p.advisor, subagents, workflows: p.workflows === undefined ? stored.workflows : p.workflows };
}
