import 'server-only';
import type { Kysely } from 'kysely';
import { monotonicFactory } from 'ulid';
import { z } from 'zod';
import {
  type Agent,
  type AgentSkill,
  AgentCreateParams,
  AgentUpdateParams,
  DEFAULT_AGENT_ID,
  DEFAULT_ENVIRONMENT_ID,
  type Environment,
  EnvironmentCreateParams,
  EnvironmentUpdateParams,
  normalizeEnvironmentConfig,
  normalizeModel,
  patchMetadata,
} from '~/lib/agent';
import { ConflictError, InvalidInputError, NotFoundError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import { normalizeTools } from '~/lib/toolset';
import { normalizeContextPolicy } from '~/lib/context-policy';
import { type AgentReference, type Multiagent, type MultiagentParams, type RosterEntryParams, mergeMultiagentParams, rosterRequests } from '~/lib/multiagent';
import type { Database } from '~/server/session/schema';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { type ListPage, keysetWalk, newestFirst, pageOf, whereTimeRange, type TimeRange } from '~/server/session/keyset-page';

const ulid = monotonicFactory();
const MAX_PAGE = 100;


function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new InvalidInputError(describeZodError(r.error));
  return r.data;
}

/**
 * Agents (versioned: an update writes a new version, never changes an old one) and environments,
 * in the session database. The built-in defaults (`agent_default`, `env_default`) are made once,
 * by whichever instance starts first, so a fresh server gives a working session with no setup.
 */
export class AgentStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly defaults: { model: string; system: string },
  ) {}

  async ensureDefaults(): Promise<void> {
    const now = new Date().toISOString();
    const inserted = await this.db
      .insertInto('agents')
      .values({ id: DEFAULT_AGENT_ID, version: 1, created_at: now, updated_at: now, archived_at: null })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
      const agent = this.#agentFrom(DEFAULT_AGENT_ID, 1, now, now, parse(AgentCreateParams, { name: 'Default agent', model: this.defaults.model, system: this.defaults.system, tools: [{ type: 'agent_toolset_20260401' }] }));
      await this.db.insertInto('agent_versions').values({ agent_id: DEFAULT_AGENT_ID, version: 1, body: JSON.stringify(agent), created_at: now }).onConflict((oc) => oc.columns(['agent_id', 'version']).doNothing()).execute();
    }
    const env = this.#environmentFrom(DEFAULT_ENVIRONMENT_ID, now, now, parse(EnvironmentCreateParams, { name: 'Default environment', description: 'A sandboxed hand with no network.' }));
    await this.db.insertInto('environments').values({ id: DEFAULT_ENVIRONMENT_ID, body: JSON.stringify(env), created_at: now, updated_at: now, archived_at: null }).onConflict((oc) => oc.column('id').doNothing()).execute();
  }

  // ── agents ──
  async createAgent(input: unknown): Promise<Agent> {
    const p = parse(AgentCreateParams, input);
    await this.requireSkills(p.skills ?? []);
    const now = new Date().toISOString();
    const id = `agent_${ulid()}`;
    const multiagent = p.multiagent ? await this.resolveMultiagent(p.multiagent, { type: 'agent', id, version: 1 }) : null;
    const agent = { ...this.#agentFrom(id, 1, now, now, p), multiagent };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('agents').values({ id, version: 1, created_at: now, updated_at: now, archived_at: null }).execute();
      await trx.insertInto('agent_versions').values({ agent_id: id, version: 1, body: JSON.stringify(agent), created_at: now }).execute();
    });
    return agent;
  }

  /**
   * An agent's `multiagent`, each roster entry resolved to a version: the agent exists (404 naming
   * it), is not archived and has no `multiagent` of its own (depth 1: a 400 naming it); entries
   * name distinct agents, `self` at most once.
   */
  async resolveMultiagent(p: MultiagentParams, self: AgentReference): Promise<Multiagent> {
    if (p.type === 'coordinator') return { type: 'coordinator', agents: await this.#resolveRoster(p.agents, self, 'multiagent.agents') };
    if (p.subagents?.type === 'disabled') return { type: 'multiagent_20261001', advisor: { type: 'disabled' }, subagents: { type: 'disabled' }, workflows: { type: 'disabled' } };
    const inline = p.subagents?.inline_agents ?? { type: 'enabled' as const };
    const predefined = await this.#resolveRoster(p.subagents?.predefined_agents ?? [], self, 'multiagent.subagents.predefined_agents');
    if (inline.type === 'disabled' && predefined.length === 0) throw new InvalidInputError('multiagent.subagents.predefined_agents: with inline_agents disabled, name at least one agent');
    return { type: 'multiagent_20261001', advisor: { type: 'disabled' }, subagents: { type: 'enabled', inline_agents: inline, predefined_agents: predefined }, workflows: { type: 'disabled' } };
  }

  async #resolveRoster(entries: readonly RosterEntryParams[], self: AgentReference, field: string): Promise<AgentReference[]> {
    const out: AgentReference[] = [];
    const requests = rosterRequests(entries, self.id);
    if (requests.filter((r) => r.self).length > 1) throw new InvalidInputError(`${field}: self at most once`);
    for (const [i, r] of requests.entries()) {
      let ref: AgentReference;
      if (r.self || r.id === self.id) ref = { type: 'agent', id: self.id, version: r.self || r.version === undefined ? self.version : r.version };
      else {
        const row = await this.db.selectFrom('agents').selectAll().where('id', '=', r.id).executeTakeFirst();
        if (!row) throw new NotFoundError('agent', r.id);
        if (row.archived_at !== null) throw new InvalidInputError(`${field}[${i}]: agent ${r.id} is archived`);
        const agent = await this.getAgent(r.id, r.version);
        if (agent.multiagent) throw new InvalidInputError(`${field}[${i}]: agent ${r.id} has multiagent itself; a rostered agent may not (depth 1)`);
        ref = { type: 'agent', id: r.id, version: agent.version };
      }
      if (out.some((o) => o.id === ref.id)) throw new InvalidInputError(`${field}[${i}]: agent ${ref.id} is named twice`);
      out.push(ref);
    }
    return out;
  }

  /** Each skill (and a pinned version) exists: else a 404 naming the first that does not. */
  async requireSkills(skills: readonly AgentSkill[]): Promise<void> {
    for (const s of skills) {
      const row = await this.db.selectFrom('skills').select('id').where('id', '=', s.skill_id).executeTakeFirst();
      if (!row) throw new NotFoundError('skill', s.skill_id);
      if (s.version === 'latest') continue;
      const v = await this.db.selectFrom('skill_versions').select('version').where('skill_id', '=', s.skill_id).where('version', '=', s.version).executeTakeFirst();
      if (!v) throw new NotFoundError(`skill ${s.skill_id} version`, s.version);
    }
  }

  async getAgent(id: string, version?: number): Promise<Agent> {
    let row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    // The built-in default exists whenever it is asked for, even on a database no runtime booted
    // (a test's, or one an instance reaches before its start made them).
    if (!row && id === DEFAULT_AGENT_ID) {
      await this.ensureDefaults();
      row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    }
    if (!row) throw new NotFoundError('agent', id);
    const v = await this.db
      .selectFrom('agent_versions')
      .select('body')
      .where('agent_id', '=', id)
      .where('version', '=', version ?? row.version)
      .executeTakeFirst();
    if (!v) throw new NotFoundError('agent version', `${id}@${version}`);
    const agent = JSON.parse(v.body) as Agent;
    // Versions stored before context policies existed run on the full log.
    return { ...agent, context_policy: normalizeContextPolicy(agent.context_policy), archived_at: row.archived_at };
  }

  async updateAgent(id: string, input: unknown): Promise<Agent> {
    const p = parse(AgentUpdateParams, input);
    await this.requireSkills(p.skills ?? []);
    // The roster is resolved before the transaction (it reads other agents); the version it names
    // for `self` is the one this update writes, checked again inside.
    const before = p.multiagent ? await this.getAgent(id) : null;
    const multiagent: Multiagent | null | undefined =
      p.multiagent && before ? await this.resolveMultiagent(mergeMultiagentParams(before.multiagent, p.multiagent), { type: 'agent', id, version: before.version + 1 }) : p.multiagent === null ? null : undefined;
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) throw new NotFoundError('agent', id);
      if (p.version !== undefined && p.version !== row.version) throw new ConflictError(`agent ${id} is at version ${row.version}, not ${p.version}: read it again and retry`);
      const cur = await trx.selectFrom('agent_versions').select('body').where('agent_id', '=', id).where('version', '=', row.version).executeTakeFirstOrThrow();
      const prev = JSON.parse(cur.body) as Agent;
      if (before && before.version !== row.version) throw new ConflictError(`agent ${id} changed meanwhile: read it again and retry`);
      const now = new Date().toISOString();
      const next: Agent = {
        ...prev,
        version: row.version + 1,
        name: p.name ?? prev.name,
        description: p.description === undefined ? prev.description : p.description,
        metadata: patchMetadata(prev.metadata, p.metadata),
        model: p.model === undefined ? prev.model : normalizeModel(p.model),
        system: p.system === undefined ? prev.system : p.system,
        tools: p.tools === undefined ? prev.tools : normalizeTools(p.tools ?? []),
        mcp_servers: p.mcp_servers === undefined ? prev.mcp_servers : (p.mcp_servers ?? []),
        skills: p.skills === undefined ? (prev.skills ?? []) : (p.skills ?? []),
        context_policy: p.context_policy === undefined ? normalizeContextPolicy(prev.context_policy) : normalizeContextPolicy(p.context_policy),
        multiagent: multiagent === undefined ? (prev.multiagent ?? null) : multiagent,
        updated_at: now,
      };
      // Optimistic concurrency holds even without `version`: two updates never write one version twice.
      const bumped = await trx.updateTable('agents').set({ version: next.version, updated_at: now }).where('id', '=', id).where('version', '=', row.version).executeTakeFirst();
      if (Number(bumped.numUpdatedRows) !== 1) throw new ConflictError(`agent ${id} changed meanwhile: read it again and retry`);
      await trx.insertInto('agent_versions').values({ agent_id: id, version: next.version, body: JSON.stringify(next), created_at: now }).execute();
      return { ...next, archived_at: row.archived_at };
    });
  }

  async archiveAgent(id: string): Promise<Agent> {
    if (id === DEFAULT_AGENT_ID) throw new ConflictError('the default agent cannot be archived: sessions made without an agent run it');
    const now = new Date().toISOString();
    await this.db.updateTable('agents').set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)) })).where('id', '=', id).execute();
    return this.getAgent(id);
  }

  async listAgents(q: { limit?: number; page?: string | null; includeArchived?: boolean; createdAt?: TimeRange }): Promise<ListPage<Agent>> {
    const limit = Math.min(q.limit ?? 20, MAX_PAGE);
    let query = whereTimeRange(this.db.selectFrom('agents').selectAll(), 'created_at', 'createdAt', q.createdAt);
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    const page = await newestFirst(query, 'agents', q.page, limit);
    return { data: await Promise.all(page.data.map((r) => this.getAgent(r.id))), next_page: page.next_page };
  }

  async listAgentVersions(id: string, q: { limit?: number; page?: string | null }): Promise<ListPage<Agent>> {
    const row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError('agent', id);
    const limit = Math.min(q.limit ?? 20, MAX_PAGE);
    const after = q.page ? decodeCursor(q.page, `agent_versions:${id}`, [z.number().int()]) : null;
    const query = this.db.selectFrom('agent_versions').select(['version', 'body']).where('agent_id', '=', id);
    const rows = await keysetWalk(query, { key: 'version', walk: 'desc', after: after && { key: after[0] }, limit }).execute();
    const page = pageOf(rows, limit, (last) => encodeCursor(`agent_versions:${id}`, [last.version]));
    return {
      data: page.data.map((v) => {
        const agent = JSON.parse(v.body) as Agent;
        return { ...agent, context_policy: normalizeContextPolicy(agent.context_policy), archived_at: row.archived_at };
      }),
      next_page: page.next_page,
    };
  }

  #agentFrom(id: string, version: number, createdAt: string, updatedAt: string, p: z.output<typeof AgentCreateParams>): Agent {
    return {
      id,
      type: 'agent',
      version,
      name: p.name,
      description: p.description ?? null,
      metadata: p.metadata ?? {},
      model: normalizeModel(p.model),
      system: p.system ?? null,
      tools: normalizeTools(p.tools ?? []),
      mcp_servers: p.mcp_servers ?? [],
      skills: p.skills ?? [],
      execution_identity: null,
      multiagent: null,
      context_policy: normalizeContextPolicy(p.context_policy),
      created_at: createdAt,
      updated_at: updatedAt,
      archived_at: null,
    };
  }

  // ── environments ──
  async createEnvironment(input: unknown): Promise<Environment> {
    const p = parse(EnvironmentCreateParams, input);
    const now = new Date().toISOString();
    const env = this.#environmentFrom(`env_${ulid()}`, now, now, p);
    await this.db.insertInto('environments').values({ id: env.id, body: JSON.stringify(env), created_at: now, updated_at: now, archived_at: null }).execute();
    return env;
  }

  async getEnvironment(id: string): Promise<Environment> {
    let row = await this.db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row && id === DEFAULT_ENVIRONMENT_ID) {
      await this.ensureDefaults();
      row = await this.db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
    }
    if (!row) throw new NotFoundError('environment', id);
    return { ...(JSON.parse(row.body) as Environment), archived_at: row.archived_at };
  }

  async updateEnvironment(id: string, input: unknown): Promise<Environment> {
    const p = parse(EnvironmentUpdateParams, input);
    const prev = await this.getEnvironment(id);
    if (p.config && p.config.type !== prev.config.type) throw new InvalidInputError(`config.type: an environment's type cannot change (${prev.config.type} → ${p.config.type})`);
    const now = new Date().toISOString();
    const next: Environment = {
      ...prev,
      name: p.name ?? prev.name,
      description: p.description === undefined ? prev.description : p.description,
      metadata: patchMetadata(prev.metadata, p.metadata),
      config: p.config ? normalizeEnvironmentConfig(p.config) : prev.config,
      scope: p.scope ?? prev.scope,
      updated_at: now,
    };
    await this.db.updateTable('environments').set({ body: JSON.stringify(next), updated_at: now }).where('id', '=', id).execute();
    return next;
  }

  async archiveEnvironment(id: string): Promise<Environment> {
    if (id === DEFAULT_ENVIRONMENT_ID) throw new ConflictError('the default environment cannot be archived: sessions made without one use it');
    const now = new Date().toISOString();
    await this.db.updateTable('environments').set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)) })).where('id', '=', id).execute();
    return this.getEnvironment(id);
  }

  async deleteEnvironment(id: string): Promise<{ id: string; type: 'environment_deleted' }> {
    if (id === DEFAULT_ENVIRONMENT_ID) throw new ConflictError('the default environment cannot be deleted');
    const r = await this.db.deleteFrom('environments').where('id', '=', id).executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw new NotFoundError('environment', id);
    return { id, type: 'environment_deleted' };
  }

  async listEnvironments(q: { limit?: number; page?: string | null; includeArchived?: boolean }): Promise<ListPage<Environment>> {
    const limit = Math.min(q.limit ?? 20, MAX_PAGE);
    let query = this.db.selectFrom('environments').selectAll();
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    const page = await newestFirst(query, 'environments', q.page, limit);
    return { data: page.data.map((r) => ({ ...(JSON.parse(r.body) as Environment), archived_at: r.archived_at })), next_page: page.next_page };
  }


  #environmentFrom(id: string, createdAt: string, updatedAt: string, p: z.output<typeof EnvironmentCreateParams>): Environment {
    return {
      id,
      type: 'environment',
      name: p.name,
      description: p.description ?? null,
      metadata: p.metadata ?? {},
      config: normalizeEnvironmentConfig(p.config),
      scope: p.scope ?? 'organization',
      created_at: createdAt,
      updated_at: updatedAt,
      archived_at: null,
    };
  }
}
