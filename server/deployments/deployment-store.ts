import 'server-only';
import type { Kysely, Selectable } from 'kysely';
import { NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import type { BudgetLimit } from '~/lib/budget-limit';
import type { ScheduleParams } from '~/lib/cron-schedule';
import type { PausedReason, RunError } from '~/lib/deployment';
import { type ListPage, type TimeRange, newestFirst, whereTimeRange } from '~/server/session/keyset-page';
import type { Database, DeploymentRunsTable, DeploymentsTable } from '~/server/session/schema';

/** What a deployment hands each session it starts (kept as JSON in `config`). */
export interface DeploymentConfig {
  initial_events: unknown[];
  resources: unknown[];
  vault_ids: string[];
  budget: BudgetLimit | null;
}

/** A deployment's row, its JSON read. */
export interface DeploymentRow {
  id: string;
  name: string;
  description: string | null;
  agent: { id: string; version: number };
  environment_id: string;
  config: DeploymentConfig;
  metadata: Record<string, string>;
  schedule: ScheduleParams | null;
  paused_reason: PausedReason | null;
  next_fire_at: string | null;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export type Trigger = { type: 'manual' } | { type: 'schedule'; scheduled_at: string };

export interface DeploymentRun {
  id: string;
  type: 'deployment_run';
  deployment_id: string;
  agent: { id: string; type: 'agent'; version: number };
  trigger_context: Trigger;
  session_id: string | null;
  error: RunError | null;
  created_at: string;
}

const rowOf = (r: Selectable<DeploymentsTable>): DeploymentRow => ({
  id: r.id,
  name: r.name,
  description: r.description,
  agent: { id: r.agent_id, version: Number(r.agent_version) },
  environment_id: r.environment_id,
  config: JSON.parse(r.config) as DeploymentConfig,
  metadata: JSON.parse(r.metadata) as Record<string, string>,
  schedule: r.schedule ? (JSON.parse(r.schedule) as ScheduleParams) : null,
  paused_reason: r.paused_reason ? (JSON.parse(r.paused_reason) as PausedReason) : null,
  next_fire_at: r.next_fire_at,
  last_run_at: r.last_run_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  archived_at: r.archived_at,
});

const runOf = (r: Selectable<DeploymentRunsTable>): DeploymentRun => ({
  id: r.id,
  type: 'deployment_run',
  deployment_id: r.deployment_id,
  agent: { id: r.agent_id, type: 'agent', version: Number(r.agent_version) },
  trigger_context: r.trigger_type === 'schedule' && r.scheduled_at ? { type: 'schedule', scheduled_at: r.scheduled_at } : { type: 'manual' },
  session_id: r.session_id,
  error: r.error ? (JSON.parse(r.error) as RunError) : null,
  created_at: r.created_at,
});

export type DeploymentWrite = Omit<DeploymentRow, 'id' | 'created_at' | 'updated_at' | 'archived_at' | 'last_run_at'>;

function columns(d: Partial<DeploymentWrite>): Partial<DeploymentsTable> {
  return {
    ...(d.name !== undefined ? { name: d.name } : {}),
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.agent !== undefined ? { agent_id: d.agent.id, agent_version: d.agent.version } : {}),
    ...(d.environment_id !== undefined ? { environment_id: d.environment_id } : {}),
    ...(d.config !== undefined ? { config: JSON.stringify(d.config) } : {}),
    ...(d.metadata !== undefined ? { metadata: JSON.stringify(d.metadata) } : {}),
    ...(d.schedule !== undefined ? { schedule: d.schedule ? JSON.stringify(d.schedule) : null } : {}),
    ...(d.paused_reason !== undefined ? { paused_reason: d.paused_reason ? JSON.stringify(d.paused_reason) : null } : {}),
    ...(d.next_fire_at !== undefined ? { next_fire_at: d.next_fire_at } : {}),
  };
}

/** Deployments and their runs, in the session database (SQLite or PostgreSQL alike). */
export class DeploymentStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(d: DeploymentWrite): Promise<DeploymentRow> {
    const now = new Date().toISOString();
    const id = newId('depl');
    await this.db
      .insertInto('deployments')
      .values({ ...(columns(d) as DeploymentsTable), id, created_at: now, updated_at: now, archived_at: null, last_run_at: null })
      .execute();
    return this.get(id);
  }

  async get(id: string): Promise<DeploymentRow> {
    const r = await this.db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('deployment', id);
    return rowOf(r);
  }

  async update(id: string, d: Partial<DeploymentWrite> & { archived?: true }): Promise<DeploymentRow> {
    const now = new Date().toISOString();
    const r = await this.db
      .updateTable('deployments')
      .set((eb) => ({ ...columns(d), ...(d.archived ? { archived_at: eb.fn.coalesce('archived_at', eb.val(now)), next_fire_at: null } : {}), updated_at: now }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!r) throw new NotFoundError('deployment', id);
    return rowOf(r);
  }

  async list(q: { limit: number; page?: string | undefined; agentId?: string | undefined; includeArchived: boolean; status?: 'active' | 'paused' | undefined; createdAt?: TimeRange }): Promise<ListPage<DeploymentRow>> {
    let query = this.db.selectFrom('deployments').selectAll();
    if (q.agentId !== undefined) query = query.where('agent_id', '=', q.agentId);
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    if (q.status === 'paused') query = query.where('paused_reason', 'is not', null);
    if (q.status === 'active') query = query.where('paused_reason', 'is', null);
    query = whereTimeRange(query, 'created_at', 'created_at', q.createdAt);
    const page = await newestFirst(query, 'deployments', q.page, q.limit);
    return { data: page.data.map(rowOf), next_page: page.next_page };
  }

  /** Scheduled deployments due at `now`: active, not archived, their next time at or before `now`. */
  async due(now: string, limit = 100): Promise<DeploymentRow[]> {
    const rows = await this.db
      .selectFrom('deployments')
      .selectAll()
      .where('next_fire_at', '<=', now)
      .where('paused_reason', 'is', null)
      .where('archived_at', 'is', null)
      .orderBy('next_fire_at')
      .limit(limit)
      .execute();
    return rows.map(rowOf);
  }

  /** Moves the next fire time on, only from the value this instance read (another may have moved it already). */
  async advance(id: string, from: string, to: string | null): Promise<void> {
    await this.db.updateTable('deployments').set({ next_fire_at: to }).where('id', '=', id).where('next_fire_at', '=', from).execute();
  }

  /** When the newest scheduled run started (kept apart from `advance`, which another instance may win). */
  async recordScheduledRun(id: string, at: string): Promise<void> {
    await this.db
      .updateTable('deployments')
      .set({ last_run_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_run_at', 'is', null), eb('last_run_at', '<', at)]))
      .execute();
  }

  /**
   * Claims one trigger: a new run row. A scheduled time is claimed once (the unique key on
   * (deployment_id, scheduled_at)): null when another instance already did.
   */
  async claimRun(d: Pick<DeploymentRow, 'id' | 'agent'>, trigger: Trigger): Promise<DeploymentRun | null> {
    const row = {
      id: newId('drun'),
      deployment_id: d.id,
      agent_id: d.agent.id,
      agent_version: d.agent.version,
      trigger_type: trigger.type,
      scheduled_at: trigger.type === 'schedule' ? trigger.scheduled_at : null,
      session_id: null,
      error: null,
      created_at: new Date().toISOString(),
    };
    const r = await this.db
      .insertInto('deployment_runs')
      .values(row)
      .onConflict((oc) => oc.columns(['deployment_id', 'scheduled_at']).doNothing())
      .returningAll()
      .executeTakeFirst();
    return r ? runOf(r) : null;
  }

  /** A claimed run's outcome, written once: a later write (a recovered run) never replaces it. */
  async finishRun(runId: string, outcome: { session_id: string } | { error: RunError }): Promise<DeploymentRun> {
    await this.db
      .updateTable('deployment_runs')
      .set('session_id' in outcome ? { session_id: outcome.session_id } : { error: JSON.stringify(outcome.error) })
      .where('id', '=', runId)
      .where('session_id', 'is', null)
      .where('error', 'is', null)
      .execute();
    return this.getRun(runId);
  }

  /** Runs claimed before `before` with neither a session nor an error: their instance stopped mid-fire. */
  async unfinishedRuns(before: string): Promise<DeploymentRun[]> {
    const rows = await this.db.selectFrom('deployment_runs').selectAll().where('session_id', 'is', null).where('error', 'is', null).where('created_at', '<', before).limit(100).execute();
    return rows.map(runOf);
  }

  async getRun(id: string): Promise<DeploymentRun> {
    const r = await this.db.selectFrom('deployment_runs').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('deployment run', id);
    return runOf(r);
  }

  async listRuns(q: { limit: number; page?: string | undefined; deploymentId?: string | undefined; triggerType?: 'manual' | 'schedule' | undefined; hasError?: boolean | undefined; createdAt?: TimeRange }): Promise<ListPage<DeploymentRun>> {
    let query = this.db.selectFrom('deployment_runs').selectAll();
    if (q.deploymentId !== undefined) query = query.where('deployment_id', '=', q.deploymentId);
    if (q.triggerType !== undefined) query = query.where('trigger_type', '=', q.triggerType);
    if (q.hasError === true) query = query.where('error', 'is not', null);
    if (q.hasError === false) query = query.where('session_id', 'is not', null);
    query = whereTimeRange(query, 'created_at', 'created_at', q.createdAt);
    const page = await newestFirst(query, 'deployment_runs', q.page, q.limit);
    return { data: page.data.map(runOf), next_page: page.next_page };
  }
}
