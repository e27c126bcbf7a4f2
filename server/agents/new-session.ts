import 'server-only';
import type { z } from 'zod';
import {
  DEFAULT_ENVIRONMENT_ID,
  type FileResourceParams,
  MAX_SESSION_MEMORY_STORES,
  MAX_SESSION_REPOSITORIES,
  type MemoryStoreResourceParams,
  type RepositoryResourceParams,
  type ResourceParams,
  type SessionAgent,
  SessionCreateParams,
  normalizeModel,
  type SessionMultiagent,
  sessionAgentOf,
  threadAgentOf,
  unsupportedEnvironment,
} from '~/lib/agent';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import type { AgentReference, Multiagent } from '~/lib/multiagent';
import { describeZodError } from '~/lib/events';
import { normalizeTools } from '~/lib/toolset';
import type { AgentStore } from '~/server/agents/agent-store';
import type { Config } from '~/server/config';
import type { MemoryRepo } from '~/server/memory/memory-repo';
import { type MemoryStoreResource, memoryResourcesFor } from '~/server/memory/session-memory';
import type { RepositoryStore } from '~/server/proxy/repository-store';
import type { SessionFileStore } from '~/server/files/session-files';
import type { Session, SessionStore } from '~/server/session/store';
import type { VaultStore } from '~/server/vault/vault-store';

export interface NewSessionDeps {
  store: SessionStore;
  agents: AgentStore;
  /** `vault_ids` must name vaults that exist and are not archived. */
  vaults: Pick<VaultStore, 'requireUsableVaults'>;
  /** The server's settings an environment is checked against. */
  config: Pick<Config, 'PADDOCK_ALLOW_UNRESTRICTED_NETWORK'>;
  /** Where a session's repository resources and their sealed tokens go (absent: none accepted). */
  repositories?: Pick<RepositoryStore, 'add'>;
  /** Where a session's file resources go (absent: none accepted). */
  sessionFiles?: Pick<SessionFileStore, 'add' | 'requireFiles'>;
  /** The memory stores a session's `memory_store` resources name (absent: none accepted). */
  memory?: Pick<MemoryRepo, 'getStores'>;
}

/** The agent a new session runs: the version asked for (else the latest), with any overrides applied. */
export async function resolveSessionAgent(agents: AgentStore, ref: z.output<typeof SessionCreateParams>['agent']): Promise<SessionAgent> {
  const id = typeof ref === 'string' ? ref : ref.id;
  const version = typeof ref === 'string' ? undefined : (ref.version ?? undefined);
  const agent = await agents.getAgent(id, version);
  if (agent.archived_at !== null) throw new InvalidInputError(`agent: ${id} is archived; a new session needs an agent that is not`);
  const snapshot = { ...sessionAgentOf(agent), multiagent: await sessionMultiagent(agents, agent.multiagent) };
  if (typeof ref === 'string' || ref.type === 'agent') return snapshot;
  return {
    ...snapshot,
    ...(ref.model ? { model: normalizeModel(ref.model) } : {}),
    ...(ref.system !== undefined ? { system: ref.system } : {}),
    ...(ref.tools ? { tools: normalizeTools(ref.tools) } : {}),
    ...(ref.mcp_servers ? { mcp_servers: ref.mcp_servers } : {}),
    ...(ref.skills ? { skills: ref.skills } : {}),
  };
}

/** A session's copy of its agent's roster: each pinned version's definition, read once at creation. */
async function sessionMultiagent(agents: AgentStore, m: Multiagent | null): Promise<SessionMultiagent | null> {
  if (!m) return null;
  const defs = (refs: readonly AgentReference[]) => Promise.all(refs.map(async (r) => threadAgentOf(await agents.getAgent(r.id, r.version))));
  if (m.type === 'coordinator') return { type: 'coordinator', agents: await defs(m.agents) };
  const sub = m.subagents;
  return { ...m, subagents: sub.type === 'enabled' ? { ...sub, predefined_agents: await defs(sub.predefined_agents) } : sub };
}

/**
 * The memory stores a new session attaches: at most 8, each existing and not archived (else a 404
 * or 400 naming it, before anything is written), snapshotted as resources.
 */
async function memoryResources(deps: NewSessionDeps, resources: readonly ResourceParams[]): Promise<MemoryStoreResource[]> {
  const params = resources.filter((r): r is MemoryStoreResourceParams => r.type === 'memory_store');
  if (params.length === 0) return [];
  if (!deps.memory) throw new InvalidInputError('resources: memory stores cannot be attached here');
  if (params.length > MAX_SESSION_MEMORY_STORES) throw new InvalidInputError(`resources: at most ${MAX_SESSION_MEMORY_STORES} memory stores per session (got ${params.length})`);
  const ids = params.map((p) => p.memory_store_id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new InvalidInputError(`resources: memory store ${dup} is attached twice`);
  const stores = new Map((await deps.memory.getStores(ids)).map((s) => [s.id, s]));
  for (const id of ids) {
    const s = stores.get(id);
    if (!s) throw new NotFoundError('memory store', id);
    if (s.archived_at !== null) throw new InvalidInputError(`resources: memory store ${id} is archived`);
  }
  return memoryResourcesFor(params, stores);
}

/**
 * Creates a session as the Managed Agents API does (the REST API and the UI both come here):
 * everything is validated before anything is written, the session keeps a snapshot of its agent,
 * and `initial_events` are stored with it. Returns the session and whether it has work.
 */
export async function createSessionFor(deps: NewSessionDeps, input: unknown): Promise<{ session: Session; hasWork: boolean }> {
  const parsed = SessionCreateParams.safeParse(input);
  if (!parsed.success) throw new InvalidInputError(describeZodError(parsed.error));
  const p = parsed.data;
  const agent = await resolveSessionAgent(deps.agents, p.agent);
  const envId = p.environment_id ?? DEFAULT_ENVIRONMENT_ID;
  const environment = await deps.agents.getEnvironment(envId);
  if (environment.archived_at !== null) throw new InvalidInputError(`environment_id: ${envId} is archived`);
  const unsupported = unsupportedEnvironment(environment.config, { allowUnrestrictedNetwork: deps.config.PADDOCK_ALLOW_UNRESTRICTED_NETWORK });
  if (unsupported) throw new InvalidInputError(`environment_id: ${envId} ${unsupported}`);
  await deps.vaults.requireUsableVaults(p.vault_ids ?? []);
  // A session's skills are its agent's (overrides included): each must still exist.
  await deps.agents.requireSkills(agent.skills ?? []);
  const memory = await memoryResources(deps, p.resources ?? []);
  const repositories = (p.resources ?? []).filter((r): r is RepositoryResourceParams => r.type === 'github_repository');
  if (repositories.length > 0 && !deps.repositories) throw new InvalidInputError('resources: repositories cannot be attached here');
  if (repositories.length > MAX_SESSION_REPOSITORIES) throw new InvalidInputError(`resources: a session has at most ${MAX_SESSION_REPOSITORIES} repositories`);
  const files = (p.resources ?? []).filter((r): r is FileResourceParams => r.type === 'file');
  if (files.length > 0 && !deps.sessionFiles) throw new InvalidInputError('resources: files cannot be attached here');
  // An unknown file is a 404 naming it before anything is written.
  if (files.length > 0) await deps.sessionFiles!.requireFiles(files.map((f) => f.file_id));
  const session = await deps.store.createSession({
    ...(p.title ? { title: p.title } : {}),
    ...(p.metadata ? { metadata: p.metadata } : {}),
    agent,
    environment_id: envId,
    vault_ids: p.vault_ids ?? [],
    budget: p.budget ?? null,
    // Repositories have rows of their own (the resources API changes them; a token is sealed beside
    // its repository). Memory stores are kept here, snapshotted as attached.
    resources: memory,
  });
  const initial = p.initial_events ?? [];
  try {
    if (repositories.length > 0) await deps.repositories!.add(session.id, repositories);
    if (files.length > 0) await deps.sessionFiles!.add(session.id, files);
    if (initial.length === 0) return { session, hasWork: false };
    await deps.store.emitEvents(session.id, initial);
  } catch (e) {
    // All or nothing: a session whose resources or first events could not be stored is not left behind.
    await deps.store.deleteSession(session.id).catch(() => undefined);
    throw e;
  }
  return { session: (await deps.store.getSession(session.id)) ?? session, hasWork: true };
}
