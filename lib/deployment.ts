import { z } from 'zod';
import { AgentRef, InitialEvent, Metadata, MetadataPatch, ResourceParams, VaultId } from '~/lib/agent';
import { BudgetLimit } from '~/lib/budget-limit';
import { ScheduleParams } from '~/lib/cron-schedule';

/**
 * A deployment's parameters as the Managed Agents API takes them. Initial events are what session
 * create accepts today (the session event parser's `InitialEvent`), so a fire never stores an event
 * a session would refuse. The agent is pinned to a version when the deployment is written.
 */
const Name = z.string().trim().min(1).max(256);
const Description = z.string().max(2048);
const DeploymentAgent = AgentRef.refine((a) => typeof a === 'string' || a.type === 'agent', { message: 'must be an agent id or {type: "agent", id, version}' });

export const DeploymentCreateParams = z
  .object({
    name: Name,
    description: Description.nullish(),
    agent: DeploymentAgent,
    environment_id: z.string().min(1).max(64),
    initial_events: z.array(InitialEvent).min(1).max(50),
    resources: z.array(ResourceParams).max(500).optional(),
    vault_ids: z.array(VaultId).max(50).optional(),
    budget: BudgetLimit.nullish(),
    metadata: Metadata.optional(),
    schedule: ScheduleParams.nullish(),
  })
  .strict();
export type DeploymentCreateParams = z.output<typeof DeploymentCreateParams>;

export const DeploymentUpdateParams = z
  .object({
    name: Name.optional(),
    description: Description.nullish(),
    agent: DeploymentAgent.optional(),
    environment_id: z.string().min(1).max(64).optional(),
    initial_events: z.array(InitialEvent).min(1).max(50).optional(),
    resources: z.array(ResourceParams).max(500).nullish(),
    vault_ids: z.array(VaultId).max(50).nullish(),
    budget: BudgetLimit.nullish(),
    metadata: MetadataPatch.nullish(),
    schedule: ScheduleParams.nullish(),
  })
  .strict();
export type DeploymentUpdateParams = z.output<typeof DeploymentUpdateParams>;

/** Why a run failed, as the API names it (`BetaManagedAgentsDeploymentRun.error`). */
export type RunErrorType =
  | 'environment_archived_error'
  | 'agent_archived_error'
  | 'environment_not_found_error'
  | 'vault_not_found_error'
  | 'vault_archived_error'
  | 'file_not_found_error'
  | 'memory_store_archived_error'
  | 'skill_not_found_error'
  | 'session_resource_not_found_error'
  | 'session_creation_rejected_error'
  | 'unknown_error';

export interface RunError {
  type: RunErrorType;
  message: string;
}

/** Run errors that pause a scheduled deployment (its next fire would fail the same way). */
export const PAUSING_ERRORS: ReadonlySet<RunErrorType> = new Set<RunErrorType>([
  'environment_archived_error',
  'agent_archived_error',
  'environment_not_found_error',
  'vault_not_found_error',
  'vault_archived_error',
  'file_not_found_error',
  'memory_store_archived_error',
  'skill_not_found_error',
  'session_resource_not_found_error',
]);

export type PausedReason = { type: 'manual' } | { type: 'error'; error: { type: RunErrorType } };
