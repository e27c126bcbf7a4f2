import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { sql } from 'kysely';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID } from '~/lib/agent';
import { ConflictError, InvalidInputError, NotFoundError } from '~/lib/errors';
import { AgentStore } from '~/server/agents/agent-store';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

let dir: string;
let store: KyselySessionStore;
let agents: AgentStore;
let pgDb: TestDatabase | null = null;

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_agents');
});
afterAll(async () => {
  await pgDb?.drop();
});

describe.each(['sqlite', 'postgres'] as const)('agent store on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-agents-'));
    if (kind === 'sqlite') store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    else {
      store = await openPostgresStore({ url: pgDb!.url });
      await sql`truncate table agent_versions, agents, environments cascade`.execute(store.db);
    }
    agents = new AgentStore(store.db, { model: 'claude-sonnet-5-5', system: 'be useful' });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the default agent and environment once, however often it starts', async () => {
    await agents.ensureDefaults();
    await agents.ensureDefaults();
    const a = await agents.getAgent(DEFAULT_AGENT_ID);
    expect(a).toMatchObject({ id: DEFAULT_AGENT_ID, version: 1, model: { id: 'claude-sonnet-5-5' }, system: 'be useful' });
    expect(a.tools[0]).toMatchObject({ type: 'agent_toolset_20260401', default_config: { enabled: true, permission_policy: { type: 'always_allow' } } });
    expect(await agents.getEnvironment(DEFAULT_ENVIRONMENT_ID)).toMatchObject({ config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: [] } } });
    expect((await agents.listAgents({})).data).toHaveLength(1);
  });

  it('versions every update, keeps old versions readable and refuses a stale version', async () => {
    const a = await agents.createAgent({ name: 'coder', model: { id: 'claude-opus-5', effort: 'high' }, tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] });
    expect(a).toMatchObject({ version: 1, model: { id: 'claude-opus-5', effort: { type: 'high' } } });
    expect(a.tools[0]).toMatchObject({ configs: [{ name: 'bash', enabled: true, permission_policy: { type: 'always_ask' } }] });
    const b = await agents.updateAgent(a.id, { version: 1, system: 'new', metadata: { team: 'x' } });
    expect(b).toMatchObject({ version: 2, system: 'new', metadata: { team: 'x' }, name: 'coder' });
    await expect(agents.updateAgent(a.id, { version: 1, system: 'lost update' })).rejects.toBeInstanceOf(ConflictError);
    expect((await agents.getAgent(a.id, 1)).system).toBeNull();
    expect((await agents.getAgent(a.id)).version).toBe(2);
    expect((await agents.listAgentVersions(a.id, {})).data.map((v) => v.version)).toEqual([2, 1]);
    const c = await agents.updateAgent(a.id, { metadata: { team: null } });
    expect(c.metadata).toEqual({});
  });

  it('keeps a context policy per version, defaults filled in; an agent that names none sees the full log', async () => {
    const a = await agents.createAgent({ name: 'long-runner', model: 'm' });
    expect(a.context_policy).toEqual({ type: 'full' });
    const b = await agents.updateAgent(a.id, { context_policy: { type: 'window' } });
    expect(b.context_policy).toEqual({ type: 'window', max_input_tokens: 100_000 });
    const c = await agents.updateAgent(a.id, { system: 'unchanged policy' });
    expect(c.context_policy).toEqual({ type: 'window', max_input_tokens: 100_000 });
    const d = await agents.updateAgent(a.id, { context_policy: { type: 'clear_old_tool_results', keep_recent: 2 } });
    expect(d.context_policy).toEqual({ type: 'clear_old_tool_results', keep_recent: 2, clear_batch: 10 });
    expect((await agents.getAgent(a.id, 2)).context_policy).toEqual({ type: 'window', max_input_tokens: 100_000 });
    expect((await agents.updateAgent(a.id, { context_policy: null })).context_policy).toEqual({ type: 'full' });
    for (const bad of [{ type: 'window', max_input_tokens: 10 }, { type: 'summarize' }, { type: 'compaction', trigger_input_tokens: 'lots' }, { type: 'full', extra: 1 }]) {
      await expect(agents.createAgent({ name: 'x', model: 'm', context_policy: bad })).rejects.toThrow(/context_policy/);
    }
  });

  it('refuses bad input naming the field, and unsupported features by name', async () => {
    await expect(agents.createAgent({ model: 'm' })).rejects.toThrow(/name/);
    await expect(agents.createAgent({ name: 'x', model: 'm', skills: [{ type: 'anthropic', skill_id: 'pdf' }] })).rejects.toThrow(/skills/);
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [{ type: 'custom', name: 'bad name', description: 'd', input_schema: { type: 'object' } }] })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(agents.createAgent({ name: 'x', model: 'm', surprise: 1 })).rejects.toThrow(/surprise/);
    await expect(agents.getAgent('agent_nope')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses tools that would give the model two tools of one name, and web_search (no provider), but takes web_fetch', async () => {
    const custom = (name: string) => ({ type: 'custom', name, description: 'd', input_schema: { type: 'object' } });
    const toolset = { type: 'agent_toolset_20260401' };
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [toolset, custom('bash')] })).rejects.toThrow(/tools\.1\.name: bash is a toolset tool's name/);
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [custom('lookup'), custom('lookup')] })).rejects.toThrow(/two custom tools are named lookup/);
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [toolset, toolset] })).rejects.toThrow(/at most one agent_toolset/);
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [{ ...toolset, configs: [{ name: 'bash', enabled: false }, { name: 'bash' }] }] })).rejects.toThrow(/bash is configured twice/);
    await expect(agents.createAgent({ name: 'x', model: 'm', tools: [{ ...toolset, configs: [{ name: 'web_search', enabled: true }] }] })).rejects.toThrow(/web_search is not supported by Paddock: it has no search provider/);
    // web_fetch is built (the harness runs it): enabling it is accepted, its config kept.
    const fetching = await agents.createAgent({ name: 'x', model: 'm', tools: [{ ...toolset, configs: [{ name: 'web_fetch', enabled: true, allowed_domains: ['docs.example.com'] }] }] });
    expect(fetching.tools[0]).toMatchObject({ configs: [{ name: 'web_fetch', enabled: true, allowed_domains: ['docs.example.com'], max_content_tokens: null, url_sources: null }] });
    const ok = await agents.createAgent({ name: 'x', model: 'm', tools: [toolset, custom('lookup')] });
    await expect(agents.updateAgent(ok.id, { tools: [toolset, custom('read')] })).rejects.toThrow(/read is a toolset tool's name/);
  });

  it('archives agents out of the default list and pages through them', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await agents.createAgent({ name: `a${i}`, model: 'm' }));
    await agents.archiveAgent(made[0]!.id);
    const seen: string[] = [];
    let page: string | null = null;
    do {
      const p = await agents.listAgents({ limit: 2, page });
      seen.push(...p.data.map((a) => a.id));
      page = p.next_page;
    } while (page);
    expect(seen).toEqual(made.slice(1).reverse().map((a) => a.id));
    expect((await agents.listAgents({ includeArchived: true })).data).toHaveLength(5);
    await expect(agents.listAgents({ page: 'garbage' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('takes a coordinator roster of ids, versioned references and self, each resolved to a version', async () => {
    const worker = await agents.createAgent({ name: 'worker', model: 'm' });
    await agents.updateAgent(worker.id, { system: 'v2' });
    const critic = await agents.createAgent({ name: 'critic', model: 'm' });
    const lead = await agents.createAgent({ name: 'lead', model: 'm', multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: worker.id, version: 1 }, critic.id, { type: 'self' }] } });
    expect(lead.multiagent).toEqual({
      type: 'coordinator',
      agents: [
        { type: 'agent', id: worker.id, version: 1 },
        { type: 'agent', id: critic.id, version: 1 },
        { type: 'agent', id: lead.id, version: 1 },
      ],
    });
    expect((await agents.getAgent(lead.id)).multiagent).toEqual(lead.multiagent);
    // An update that leaves multiagent out keeps it; null takes it off.
    expect((await agents.updateAgent(lead.id, { system: 'x' })).multiagent).toEqual(lead.multiagent);
    expect((await agents.updateAgent(lead.id, { multiagent: null })).multiagent).toBeNull();
  });

  it('refuses a rostered agent that has multiagent itself (depth 1), naming it; and unknown, archived, repeated entries', async () => {
    const worker = await agents.createAgent({ name: 'worker', model: 'm' });
    const lead = await agents.createAgent({ name: 'lead', model: 'm', multiagent: { type: 'coordinator', agents: [worker.id] } });
    const err = await agents.createAgent({ name: 'top', model: 'm', multiagent: { type: 'coordinator', agents: [worker.id, lead.id] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(String(err)).toContain(`multiagent.agents[1]: agent ${lead.id} has multiagent itself`);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: ['agent_nope'] } })).rejects.toBeInstanceOf(NotFoundError);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [worker.id, { type: 'agent', id: worker.id }] } })).rejects.toThrow(/named twice/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [{ type: 'self' }, { type: 'self' }] } })).rejects.toThrow(/self at most once/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [] } })).rejects.toThrow(/multiagent.agents: at least 1/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: Array.from({ length: 21 }, (_, i) => `agent_${i}`) } })).rejects.toThrow(/at most 20/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: worker.id, version: 9 }] } })).rejects.toBeInstanceOf(NotFoundError);
    await agents.archiveAgent(worker.id);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [worker.id] } })).rejects.toThrow(/is archived/);
    // Nothing was written by a refused create.
    expect((await agents.listAgents({ includeArchived: true })).data).toHaveLength(2);
  });

  it('takes multiagent_20261001 subagents with defaults filled in, merges an update level by level, and refuses the advisor and workflows by name', async () => {
    const worker = await agents.createAgent({ name: 'worker', model: 'm' });
    const a = await agents.createAgent({ name: 'lead', model: 'm', multiagent: { type: 'multiagent_20261001', subagents: { type: 'enabled', predefined_agents: [worker.id] } } });
    expect(a.multiagent).toEqual({
      type: 'multiagent_20261001',
      advisor: { type: 'disabled' },
      subagents: { type: 'enabled', inline_agents: { type: 'enabled' }, predefined_agents: [{ type: 'agent', id: worker.id, version: 1 }] },
      workflows: { type: 'disabled' },
    });
    const b = await agents.updateAgent(a.id, { multiagent: { type: 'multiagent_20261001', subagents: { type: 'enabled', inline_agents: { type: 'disabled' } } } });
    expect(b.multiagent).toMatchObject({ subagents: { inline_agents: { type: 'disabled' }, predefined_agents: [{ id: worker.id }] } });
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'multiagent_20261001', subagents: { type: 'enabled', inline_agents: { type: 'disabled' } } } })).rejects.toThrow(/name at least one agent/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'multiagent_20261001', advisor: { type: 'enabled', model: 'claude-opus-5' } } })).rejects.toThrow(/multiagent.advisor: the advisor is not supported by Paddock/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'multiagent_20261001', workflows: { type: 'enabled' } } })).rejects.toThrow(/multiagent.workflows: workflow runs are not supported by Paddock/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'multiagent_20261001', workflows: null } })).rejects.toThrow(/multiagent.workflows/);
    await expect(agents.createAgent({ name: 'x', model: 'm', multiagent: { type: 'coordinator', agents: [{ type: 'advisor', model: 'm' }] } })).rejects.toThrow(/advisor in the roster is not supported/);
    expect((await agents.createAgent({ name: 'solo', model: 'm', multiagent: { type: 'multiagent_20261001', subagents: { type: 'disabled' } } })).multiagent).toMatchObject({ subagents: { type: 'disabled' } });
  });

  it('creates, updates, archives and deletes environments; the type of one never changes', async () => {
    const e = await agents.createEnvironment({ name: 'web', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['*.example.com'] }, packages: { npm: ['left-pad'] } } });
    expect(e.config).toMatchObject({ type: 'cloud', networking: { allowed_hosts: ['*.example.com'], allow_package_managers: false }, packages: { npm: ['left-pad'], pip: [] } });
    await expect(agents.createEnvironment({ name: 'x', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['http://evil/'] } } })).rejects.toThrow(/allowed_hosts/);
    await expect(agents.updateEnvironment(e.id, { config: { type: 'self_hosted' } })).rejects.toThrow(/config.type/);
    expect((await agents.updateEnvironment(e.id, { name: 'web2' })).name).toBe('web2');
    expect((await agents.archiveEnvironment(e.id)).archived_at).not.toBeNull();
    expect(await agents.deleteEnvironment(e.id)).toEqual({ id: e.id, type: 'environment_deleted' });
    await expect(agents.getEnvironment(e.id)).rejects.toBeInstanceOf(NotFoundError);
    await agents.ensureDefaults();
    await expect(agents.deleteEnvironment(DEFAULT_ENVIRONMENT_ID)).rejects.toBeInstanceOf(ConflictError);
  });
});
