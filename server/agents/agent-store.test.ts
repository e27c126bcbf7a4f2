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
