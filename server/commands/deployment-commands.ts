import 'server-only';
import { patchMetadata } from '~/lib/agent';
import { priceFor } from '~/lib/usage';
import { type ScheduleParams, nextFireAfter, upcomingFires } from '~/lib/cron-schedule';
import { DeploymentCreateParams, DeploymentUpdateParams, PAUSING_ERRORS, type RunError, type RunErrorType } from '~/lib/deployment';
import { ConflictError, DomainError, InvalidInputError, NotFoundError, StoreUnavailableError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import { resolveSessionAgent } from '~/server/agents/new-session';
import { createSession } from '~/server/commands/session-commands';
import type { SessionDeps } from '~/server/commands/session-deps';
import { notify } from '~/server/commands/webhook-notify';
import type { DeploymentConfig, DeploymentRow, DeploymentRun, DeploymentStore, Trigger } from '~/server/deployments/deployment-store';
import { errorFields, logger } from '~/server/log';

/**
 * Deployments' use cases, for both edges and the scheduler: an agent version pinned with an
 * environment, initial events and resources, fired by hand or by its cron schedule. Each fire is
 * one run row (its session or its error). Everything a fire would need is checked when the
 * deployment is written, so a refusal is a 4xx then rather than a failed run later.
 */
const log = logger('deployments');

export interface DeploymentDeps extends SessionDeps {
  deployments: DeploymentStore;
  /** The scheduler's clock (tests inject one); absent: the real time. */
  now?: () => Date;
}

const nowOf = (d: Pick<DeploymentDeps, 'now'>) => (d.now ? d.now() : new Date());

/** A deployment as the Managed Agents API returns it. */
export function deploymentObject(d: DeploymentRow, now: Date) {
  return {
    id: d.id,
    type: 'deployment' as const,
    name: d.name,
    description: d.description,
    agent: { id: d.agent.id, type: 'agent' as const, version: d.agent.version },
    environment_id: d.environment_id,
    initial_events: d.config.initial_events,
    resources: d.config.resources,
    vault_ids: d.config.vault_ids,
    budget: d.config.budget,
    metadata: d.metadata,
    schedule: d.schedule && {
      ...d.schedule,
      last_run_at: d.last_run_at,
      // What the schedule would do unpaused; nothing once archived.
      upcoming_runs_at: d.archived_at ? [] : upcomingFires(d.schedule, now, 5).map((t) => t.toISOString()),
    },
    status: d.paused_reason ? ('paused' as const) : ('active' as const),
    paused_reason: d.paused_reason,
    created_at: d.created_at,
    updated_at: d.updated_at,
    archived_at: d.archived_at,
  };
}

function parse<S extends typeof DeploymentCreateParams | typeof DeploymentUpdateParams>(schema: S, input: unknown) {
  const r = schema.safeParse(input);
  if (!r.success) throw new InvalidInputError(describeZodError(r.error));
  return r.data as S extends typeof DeploymentCreateParams ? DeploymentCreateParams : DeploymentUpdateParams;
}

/** Resources as the client sent them (validated): a session parses them again at each fire. */
function rawResources(input: unknown): unknown[] {
  const r = (input as { resources?: unknown } | null)?.resources;
  return Array.isArray(r) ? r : [];
}

/** The agent pinned to a version, and what its sessions would be refused for, checked now. */
async function checkTargets(d: DeploymentDeps, agentRef: DeploymentCreateParams['agent'], environmentId: string, config: DeploymentConfig): Promise<{ id: string; version: number }> {
  const agent = await resolveSessionAgent(d.agents, agentRef);
  // A budget is priced at the model's list price: a model without one could never run under it.
  if (config.budget && priceFor(agent.model.id) === null) throw new InvalidInputError(`budget: model ${agent.model.id} has no list price, so a budget cannot measure it (model_not_budgetable)`);
  const environment = await d.agents.getEnvironment(environmentId);
  if (environment.archived_at !== null) throw new InvalidInputError(`environment_id: ${environmentId} is archived`);
  await d.vaults.requireUsableVaults(config.vault_ids);
  const resources = config.resources as Array<{ type: string; file_id?: string; memory_store_id?: string }>;
  // A repository's token would be kept in the deployment: not until it can be stored sealed.
  if (resources.some((r) => r.type === 'github_repository')) throw new InvalidInputError('resources: repositories are not supported on deployments yet (their tokens are not stored here)');
  const files = resources.flatMap((r) => (r.type === 'file' && r.file_id ? [r.file_id] : []));
  if (files.length > 0) {
    if (!d.sessionFiles) throw new InvalidInputError('resources: files cannot be attached here');
    await d.sessionFiles.requireFiles(files);
  }
  const stores = resources.flatMap((r) => (r.type === 'memory_store' && r.memory_store_id ? [r.memory_store_id] : []));
  if (stores.length > 0) {
    if (!d.memory) throw new InvalidInputError('resources: memory stores cannot be attached here');
    const found = new Map((await d.memory.getStores(stores)).map((s) => [s.id, s]));
    for (const id of stores) {
      if (!found.has(id)) throw new NotFoundError('memory store', id);
      if (found.get(id)!.archived_at !== null) throw new InvalidInputError(`resources: memory store ${id} is archived`);
    }
  }
  return { id: agent.id, version: agent.version };
}

const nextFire = (schedule: ScheduleParams | null, now: Date) => (schedule ? (nextFireAfter(schedule, now)?.toISOString() ?? null) : null);

export async function createDeployment(d: DeploymentDeps, input: unknown): Promise<DeploymentRow> {
  const p = parse(DeploymentCreateParams, input);
  const config: DeploymentConfig = { initial_events: p.initial_events, resources: rawResources(input), vault_ids: p.vault_ids ?? [], budget: p.budget ?? null };
  const agent = await checkTargets(d, p.agent, p.environment_id, config);
  const created = await d.deployments.create({
    name: p.name,
    description: p.description ?? null,
    agent,
    environment_id: p.environment_id,
    config,
    metadata: p.metadata ?? {},
    schedule: p.schedule ?? null,
    paused_reason: null,
    next_fire_at: nextFire(p.schedule ?? null, nowOf(d)),
  });
  await notify(d, 'deployment.created', created.id);
  return created;
}

async function writable(d: DeploymentDeps, id: string): Promise<DeploymentRow> {
  const current = await d.deployments.get(id);
  if (current.archived_at !== null) throw new ConflictError(`deployment ${id} is archived`);
  return current;
}

/** Full replacement of what is given; omitted fields are kept. */
export async function updateDeployment(d: DeploymentDeps, id: string, input: unknown): Promise<DeploymentRow> {
  const p = parse(DeploymentUpdateParams, input);
  const current = await writable(d, id);
  const config: DeploymentConfig = {
    initial_events: p.initial_events ?? current.config.initial_events,
    resources: p.resources !== undefined ? rawResources(input) : current.config.resources,
    vault_ids: p.vault_ids !== undefined ? (p.vault_ids ?? []) : current.config.vault_ids,
    budget: p.budget !== undefined ? p.budget : current.config.budget,
  };
  const agent = await checkTargets(d, p.agent ?? { type: 'agent', id: current.agent.id, version: current.agent.version }, p.environment_id ?? current.environment_id, config);
  const schedule = p.schedule !== undefined ? p.schedule : current.schedule;
  const updated = await d.deployments.update(id, {
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...(p.description !== undefined ? { description: p.description || null } : {}),
    agent,
    ...(p.environment_id !== undefined ? { environment_id: p.environment_id } : {}),
    config,
    ...(p.metadata !== undefined ? { metadata: patchMetadata(current.metadata, p.metadata) } : {}),
    // A new schedule counts from now: times of the old one are not fired.
    ...(p.schedule !== undefined ? { schedule, next_fire_at: nextFire(schedule, nowOf(d)) } : {}),
  });
  await notify(d, 'deployment.updated', id);
  return updated;
}

export async function archiveDeployment(d: DeploymentDeps, id: string): Promise<DeploymentRow> {
  await d.deployments.get(id);
  const archived = await d.deployments.update(id, { archived: true });
  await notify(d, 'deployment.archived', id);
  return archived;
}

export async function pauseDeployment(d: DeploymentDeps, id: string): Promise<DeploymentRow> {
  const current = await writable(d, id);
  if (current.paused_reason) return current;
  const paused = await d.deployments.update(id, { paused_reason: { type: 'manual' } });
  await notify(d, 'deployment.paused', id);
  return paused;
}

/** Times that passed while paused are not fired: the schedule resumes from now. */
export async function unpauseDeployment(d: DeploymentDeps, id: string): Promise<DeploymentRow> {
  const current = await writable(d, id);
  if (!current.paused_reason) return current;
  const unpaused = await d.deployments.update(id, { paused_reason: null, next_fire_at: nextFire(current.schedule, nowOf(d)) });
  await notify(d, 'deployment.unpaused', id);
  return unpaused;
}

/** A manual run: allowed while paused, never once archived. */
export async function runDeploymentNow(d: DeploymentDeps, id: string): Promise<DeploymentRun> {
  const current = await writable(d, id);
  const run = await fire(d, current, { type: 'manual' });
  if (!run) throw new Error('a manual run was not claimed');
  return run;
}

/** What a refused session create means for a run, as the API names it. */
export function runErrorOf(e: unknown): RunError {
  const message = e instanceof Error ? e.message : String(e);
  if (!(e instanceof DomainError) || e instanceof StoreUnavailableError) return { type: 'unknown_error', message: 'the session could not be created' };
  const rules: Array<[RegExp, RunErrorType]> = [
    [/^agent: .* is archived/, 'agent_archived_error'],
    [/^environment_id: .* is archived/, 'environment_archived_error'],
    [/^environment .* not found/, 'environment_not_found_error'],
    [/vault .* does not exist/, 'vault_not_found_error'],
    [/vault .* is archived/, 'vault_archived_error'],
    [/^file .* not found/, 'file_not_found_error'],
    [/memory store .* is archived/, 'memory_store_archived_error'],
    [/^memory store .* not found/, 'session_resource_not_found_error'],
    [/^skill .* not found/, 'skill_not_found_error'],
  ];
  const type = rules.find(([re]) => re.test(message))?.[1] ?? 'session_creation_rejected_error';
  return { type, message };
}

/**
 * One trigger: the run is claimed (a scheduled time once, whoever fires it), then its session is
 * created from the deployment and the run records it, or the error. Null: another instance had
 * already claimed this scheduled time. A scheduled fire whose error would repeat pauses the deployment.
 */
export async function fire(d: DeploymentDeps, dep: DeploymentRow, trigger: Trigger): Promise<DeploymentRun | null> {
  const run = await d.deployments.claimRun(dep, trigger);
  if (!run) return null;
  // Claimed: the run exists (started); it ends when its session is created (succeeded) or refused (failed).
  await notify(d, 'deployment_run.started', run.id);
  let outcome: { session_id: string } | { error: RunError };
  try {
    const session = await createSession(d, {
      agent: { type: 'agent', id: dep.agent.id, version: dep.agent.version },
      environment_id: dep.environment_id,
      title: dep.name.slice(0, 200),
      metadata: { deployment_id: dep.id, deployment_run_id: run.id },
      initial_events: dep.config.initial_events,
      resources: dep.config.resources,
      vault_ids: dep.config.vault_ids,
      budget: dep.config.budget,
    });
    outcome = { session_id: session.id };
  } catch (e) {
    outcome = { error: runErrorOf(e) };
    log.warn('deployment run failed', { deployment: dep.id, run: run.id, error: outcome.error.type, ...errorFields(e) });
  }
  const finished = await d.deployments.finishRun(run.id, outcome);
  await notify(d, 'error' in outcome ? 'deployment_run.failed' : 'deployment_run.succeeded', run.id);
  if ('error' in outcome && trigger.type === 'schedule' && PAUSING_ERRORS.has(outcome.error.type)) {
    await d.deployments.update(dep.id, { paused_reason: { type: 'error', error: { type: outcome.error.type } } });
    await notify(d, 'deployment.paused', dep.id);
  }
  return finished;
}
