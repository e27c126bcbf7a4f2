import { BudgetLimit } from '~/lib/budget-limit';
import { z } from 'zod';
import { type InlineAgentDefinition, UserContent } from '~/lib/events';
import { AgentToolsParams, type AgentTool } from '~/lib/toolset';
import { type ContextPolicy, ContextPolicyParams } from '~/lib/context-policy';
import { uploadMountPath } from '~/lib/mounts';
import { type Multiagent, MultiagentParams, type SessionMultiagentOf } from '~/lib/multiagent';

/**
 * Agents and environments as the Managed Agents API defines them (`@anthropic-ai/sdk`
 * `resources/beta/agents`, `resources/beta/environments`): the params a client sends, validated
 * with zod, and the stored objects. An agent is versioned: every update makes a new version and
 * a session keeps the version it was created with.
 */

export const Metadata = z
  .record(z.string().min(1).max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });
/** On update a null value deletes the key. */
export const MetadataPatch = z
  .record(z.string().min(1).max(64), z.string().max(512).nullable())
  .refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });

const Effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
export const ModelParams = z.union([
  z.string().min(1).max(128),
  z
    .object({
      id: z.string().min(1).max(128),
      effort: z.union([Effort, z.object({ type: Effort })]).nullish(),
      speed: z.enum(['standard', 'fast']).nullish(),
      inference_geo: z.string().max(64).nullish(),
    })
    .strict(),
]);

export interface ModelConfig {
  id: string;
  effort?: { type: z.infer<typeof Effort> };
  speed?: 'standard' | 'fast';
}

export function normalizeModel(m: z.output<typeof ModelParams>): ModelConfig {
  if (typeof m === 'string') return { id: m };
  const effort = m.effort == null ? undefined : typeof m.effort === 'string' ? { type: m.effort } : m.effort;
  return { id: m.id, ...(effort ? { effort } : {}), ...(m.speed ? { speed: m.speed } : {}) };
}

export const McpServerParams = z
  .object({
    type: z.literal('url'),
    name: z.string().min(1).max(64),
    url: z.url({ protocol: /^https?$/ }),
  })
  .strict();
export type McpServer = z.infer<typeof McpServerParams>;

/** At most this many skills per agent (and so per session). */
export const MAX_AGENT_SKILLS = 20;
/**
 * An agent's skills: custom ones (uploaded through /v1/skills), by id and optionally a pinned
 * version (else the latest at each session's start). None of Anthropic's ship with Paddock, so an
 * `anthropic` skill is refused by name rather than silently dropped.
 */
const SkillParams = z
  .object({ type: z.enum(['anthropic', 'custom']), skill_id: z.string().min(1).max(64), version: z.string().regex(/^(?:\d{1,20}|latest)$/, 'must be a skill version (digits) or latest').nullish() })
  .strict()
  .superRefine((s, ctx) => {
    if (s.type === 'anthropic') ctx.addIssue({ code: 'custom', message: `anthropic skill ${JSON.stringify(s.skill_id)} is not available: Paddock ships no Anthropic skills; upload it as a custom skill (/v1/skills) instead` });
  })
  .transform((s): AgentSkill => ({ type: 'custom', skill_id: s.skill_id, version: s.version ?? 'latest' }));
export interface AgentSkill {
  type: 'custom';
  skill_id: string;
  /** A pinned version, or `latest`: the newest when a session starts. */
  version: string;
}

/** Fields of an agent that clients set (create: required ones; update: all optional). */
const agentFields = {
  name: z.string().trim().min(1).max(256),
  description: z.string().max(2048).nullish(),
  metadata: Metadata.optional(),
  model: ModelParams,
  system: z.string().max(100_000).nullish(),
  tools: AgentToolsParams.optional(),
  mcp_servers: z.array(McpServerParams).max(20).optional(),
  skills: z
    .array(SkillParams)
    .max(MAX_AGENT_SKILLS, `at most ${MAX_AGENT_SKILLS} skills`)
    .refine((a) => new Set(a.map((s) => s.skill_id)).size === a.length, { message: 'each skill at most once' })
    .optional(),
  /** Paddock's extension: what of the log the model sees (lib/context-policy.ts). */
  context_policy: ContextPolicyParams.optional(),
  /** Session threads: a roster of agents the session's primary thread may delegate to (lib/multiagent.ts). */
  multiagent: MultiagentParams.nullish(),
};

/** Fields the hosted API has that Paddock does not run: refused by name, never silently dropped. */
const unsupported = {
  execution_identity: z.null({ error: 'execution_identity is not supported by Paddock' }).optional(),
};

export const AgentCreateParams = z.object({ ...agentFields, ...unsupported }).strict();
export type AgentCreateParams = z.input<typeof AgentCreateParams>;

export const AgentUpdateParams = z
  .object({
    name: agentFields.name.optional(),
    description: agentFields.description,
    metadata: MetadataPatch.nullish(),
    model: ModelParams.optional(),
    system: agentFields.system,
    tools: agentFields.tools.nullable(),
    mcp_servers: agentFields.mcp_servers.nullable(),
    skills: agentFields.skills.nullable(),
    context_policy: ContextPolicyParams.nullish(),
    multiagent: agentFields.multiagent,
    /** Optimistic concurrency: the update applies only if this is still the current version. */
    version: z.number().int().positive().optional(),
    ...unsupported,
  })
  .strict();
export type AgentUpdateParams = z.input<typeof AgentUpdateParams>;

/** One version of an agent, as the API returns it and as a session snapshots it. */
export interface Agent {
  id: string;
  type: 'agent';
  version: number;
  name: string;
  description: string | null;
  metadata: Record<string, string>;
  model: ModelConfig;
  system: string | null;
  tools: AgentTool[];
  mcp_servers: McpServer[];
  skills: AgentSkill[];
  execution_identity: null;
  multiagent: Multiagent | null;
  /** Paddock's extension (absent on versions stored before it: read as `full`). */
  context_policy?: ContextPolicy;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** What a session thread runs: a rostered agent's definition, snapshotted (its own `multiagent` never: depth 1). */
export type ThreadAgent = Omit<Agent, 'created_at' | 'updated_at' | 'archived_at' | 'metadata' | 'multiagent'>;
export type SessionMultiagent = SessionMultiagentOf<ThreadAgent>;

/** A session's agent: the version it was created with (and any per-session overrides); its roster resolved. */
export type SessionAgent = Omit<Agent, 'created_at' | 'updated_at' | 'archived_at' | 'metadata' | 'multiagent'> & { multiagent: SessionMultiagent | null };

/** A session's agent without its roster (the roster is resolved separately: `resolveSessionMultiagent`). */
export function sessionAgentOf(a: Agent): SessionAgent {
  const { created_at: _c, updated_at: _u, archived_at: _a, metadata: _m, multiagent: _ma, ...rest } = a;
  return { ...rest, multiagent: null };
}

export function threadAgentOf(a: Agent): ThreadAgent {
  const { created_at: _c, updated_at: _u, archived_at: _a, metadata: _m, multiagent: _ma, ...rest } = a;
  return rest;
}

/** An inline agent as a thread shows it (SDK `BetaManagedAgentsInlineAgent`): no id or version, it is not saved. */
export type InlineThreadAgent = Omit<ThreadAgent, 'id' | 'type' | 'version'> & { type: 'inline' };

/** What an inline agent's thread runs: the coordinator's snapshot with the definition's name, system and description, no roster (depth 1). */
export function inlineSessionAgent(coordinator: SessionAgent, name: string, def: InlineAgentDefinition): SessionAgent {
  return { ...coordinator, name, system: def.system, description: def.description, multiagent: null };
}

export function inlineThreadAgent(coordinator: SessionAgent, name: string, def: InlineAgentDefinition): InlineThreadAgent {
  const { id: _i, version: _v, type: _t, multiagent: _m, ...rest } = inlineSessionAgent(coordinator, name, def);
  return { ...rest, type: 'inline' };
}

/** Applies a metadata patch: a null value deletes the key. */
export function patchMetadata(current: Record<string, string>, patch: Record<string, string | null> | null | undefined): Record<string, string> {
  if (patch === undefined) return current;
  if (patch === null) return {};
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next;
}

// ── environments ────────────────────────────────────────────────────────────
const Host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[a-zA-Z0-9.-]+(:\d{1,5})?$/, 'must be a host name such as example.com or *.example.com');
const PackageName = z.string().min(1).max(214).regex(/^[a-zA-Z0-9@/._=<>~^+-]+$/, 'not a package name');

const Networking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }).strict(),
  z
    .object({
      type: z.literal('limited'),
      allowed_hosts: z.array(Host).max(500).nullish(),
      allow_mcp_servers: z.boolean().nullish(),
      allow_package_managers: z.boolean().nullish(),
    })
    .strict(),
]);

const Packages = z
  .object({
    type: z.literal('packages').optional(),
    apt: z.array(PackageName).max(200).nullish(),
    cargo: z.array(PackageName).max(200).nullish(),
    gem: z.array(PackageName).max(200).nullish(),
    go: z.array(PackageName).max(200).nullish(),
    npm: z.array(PackageName).max(200).nullish(),
    pip: z.array(PackageName).max(200).nullish(),
  })
  .strict();

export const EnvironmentConfigParams = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cloud'), networking: Networking.nullish(), packages: Packages.nullish() }).strict(),
  z.object({ type: z.literal('self_hosted') }).strict(),
]);

export const EnvironmentCreateParams = z
  .object({
    name: z.string().trim().min(1).max(256),
    description: z.string().max(2048).nullish(),
    metadata: Metadata.optional(),
    config: EnvironmentConfigParams.nullish(),
    scope: z.enum(['organization', 'account']).nullish(),
  })
  .strict();
export const EnvironmentUpdateParams = z
  .object({
    name: z.string().trim().min(1).max(256).nullish(),
    description: z.string().max(2048).nullish(),
    metadata: MetadataPatch.nullish(),
    config: EnvironmentConfigParams.nullish(),
    scope: z.enum(['organization', 'account']).nullish(),
  })
  .strict();

export type Networking = { type: 'unrestricted' } | { type: 'limited'; allowed_hosts: string[]; allow_mcp_servers: boolean; allow_package_managers: boolean };
export interface PackageLists {
  type: 'packages';
  apt: string[];
  cargo: string[];
  gem: string[];
  go: string[];
  npm: string[];
  pip: string[];
}
export type EnvironmentConfig = { type: 'cloud'; networking: Networking; packages: PackageLists } | { type: 'self_hosted' };

export interface Environment {
  id: string;
  type: 'environment';
  name: string;
  description: string | null;
  metadata: Record<string, string>;
  config: EnvironmentConfig;
  scope: 'organization' | 'account';
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** Limited networking with nothing allowed is the default: a hand reaches nothing it was not given. */
export function normalizeEnvironmentConfig(c: z.output<typeof EnvironmentConfigParams> | null | undefined): EnvironmentConfig {
  if (!c) return normalizeEnvironmentConfig({ type: 'cloud' });
  if (c.type === 'self_hosted') return { type: 'self_hosted' };
  const n = c.networking;
  const networking: Networking =
    n?.type === 'unrestricted'
      ? { type: 'unrestricted' }
      : { type: 'limited', allowed_hosts: n?.allowed_hosts ?? [], allow_mcp_servers: n?.allow_mcp_servers ?? false, allow_package_managers: n?.allow_package_managers ?? false };
  const p = c.packages;
  return {
    type: 'cloud',
    networking,
    packages: { type: 'packages', apt: p?.apt ?? [], cargo: p?.cargo ?? [], gem: p?.gem ?? [], go: p?.go ?? [], npm: p?.npm ?? [], pip: p?.pip ?? [] },
  };
}

// ── sessions ────────────────────────────────────────────────────────────────
export const AgentRef = z.union([
  z.string().min(1).max(64),
  z.object({ type: z.literal('agent'), id: z.string().min(1).max(64), version: z.number().int().positive().nullish() }).strict(),
  z
    .object({
      type: z.literal('agent_with_overrides'),
      id: z.string().min(1).max(64),
      version: z.number().int().positive().nullish(),
      model: ModelParams.nullish(),
      system: agentFields.system,
      tools: agentFields.tools.nullable(),
      mcp_servers: agentFields.mcp_servers.nullable(),
      skills: agentFields.skills.nullable(),
    })
    .strict(),
]);
export type AgentRef = z.output<typeof AgentRef>;

/** The built-in defaults every server has, so a session works without configuring anything. */
export const DEFAULT_AGENT_ID = 'agent_default';
export const DEFAULT_ENVIRONMENT_ID = 'env_default';

// ── session create ──────────────────────────────────────────────────────────
const Checkout = z.discriminatedUnion('type', [
  z.object({ type: z.literal('branch'), name: z.string().min(1).max(255) }).strict(),
  z.object({ type: z.literal('commit'), sha: z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a commit sha') }).strict(),
]);
const MountPath = z.string().min(1).max(1024).regex(/^\/[^\0]*$/, 'must be an absolute path');

/** Where a repository lands: the hand's workspace is `/workspace` (the SDK's default parent). */
export const WORKSPACE_ROOT = '/workspace';
const RepoMountPath = MountPath.refine((p) => p.startsWith(`${WORKSPACE_ROOT}/`) && p.length > WORKSPACE_ROOT.length + 1, { message: `must be under ${WORKSPACE_ROOT}/ (the hand's workspace)` }).refine(
  (p) => p.split('/').every((seg) => seg !== '..' && seg !== '.' && seg.toLowerCase() !== '.git'),
  { message: 'must not contain ".", ".." or ".git" segments' },
);

/**
 * A session's resources. A repository's token is write-only: sealed in its own table by
 * `server/proxy/repository-store.ts`, never kept in the session row or served back; the hand gets
 * a capability URL of the git proxy instead.
 */
export const RepositoryResourceParams = z
  .object({
    type: z.literal('github_repository'),
    url: z.url({ protocol: /^https$/, error: 'must be an https URL of a repository' }).max(2048).refine((u) => { if (!URL.canParse(u)) return false; const x = new URL(u); return x.username === '' && x.password === '' && x.search === '' && x.hash === '' && x.pathname.replace(/\/+$/, '').length > 1; }, { message: 'must be an https URL of a repository, without credentials, query or fragment' }),
    authorization_token: z.string().min(1).max(4096).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces').optional(),
    checkout: Checkout.nullish(),
    mount_path: RepoMountPath.nullish(),
  })
  .strict();
export type RepositoryResourceParams = z.output<typeof RepositoryResourceParams>;

/** A file of the Files API, mounted read-only (`lib/mounts.ts`); its mount path is checked there. */
export const FileResourceParams = z
  .object({
    type: z.literal('file'),
    file_id: z.string().regex(/^file_[0-9A-Za-z]{1,64}$/, 'must be a file id (file_…)'),
    mount_path: z.string().max(1024).nullish(),
  })
  .strict()
  .transform((p, ctx) => {
    const m = uploadMountPath(p.mount_path, p.file_id);
    if ('error' in m) {
      ctx.addIssue({ code: 'custom', path: ['mount_path'], message: m.error });
      return z.NEVER;
    }
    return { type: p.type, file_id: p.file_id, mount_path: m.path };
  });
export type FileResourceParams = z.output<typeof FileResourceParams>;

/** At most this many resources of each kind in one session. */
export const MAX_SESSION_FILES = 500;
export const MAX_SESSION_REPOSITORIES = 20;

/** At most this many memory stores per session. */
export const MAX_SESSION_MEMORY_STORES = 8;
/** A memory store attached to a session (mounted at /mnt/memory/<name>/, named in the system prompt). */
export const MemoryStoreResourceParams = z
  .object({
    type: z.literal('memory_store'),
    memory_store_id: z.string().regex(/^memstore_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a memory store id (memstore_…)'),
    access: z.enum(['read_write', 'read_only']).nullish(),
    instructions: z.string().max(4096).nullish(),
  })
  .strict();
export type MemoryStoreResourceParams = z.output<typeof MemoryStoreResourceParams>;

export const ResourceParams = z.discriminatedUnion('type', [
  RepositoryResourceParams,
  FileResourceParams,
  MemoryStoreResourceParams,
]);
export type ResourceParams = z.output<typeof ResourceParams>;

export const VaultId = z.string().regex(/^vlt_[A-Za-z0-9]{1,64}$/, 'must be a vault id (vlt_…)');

export const InitialEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user.message'), content: z.array(UserContent).min(1).max(100) }).strict(),
]);

export const SessionCreateParams = z
  .object({
    agent: AgentRef,
    /** Paddock default: the built-in environment when absent. */
    environment_id: z.string().min(1).max(64).optional(),
    title: z.string().trim().max(200).nullish(),
    metadata: Metadata.optional(),
    initial_events: z.array(InitialEvent).max(20).optional(),
    vault_ids: z.array(VaultId).max(20).optional(),
    resources: z.array(ResourceParams).max(MAX_SESSION_FILES + MAX_SESSION_REPOSITORIES).optional(),
    /** A spend ceiling at list prices: at it, no new model request starts (the session idles with `budget_reached`). */
    budget: BudgetLimit.nullish(),
  })
  .strict();
export type SessionCreateParams = z.input<typeof SessionCreateParams>;

export const SessionUpdateParams = z
  .object({
    title: z.string().trim().min(1).max(200).nullish(),
    metadata: MetadataPatch.nullish(),
    /** Only the agent's tools and MCP servers change mid-session (each a full replacement), and never while it runs. */
    agent: z.object({ tools: AgentToolsParams.optional(), mcp_servers: z.array(McpServerParams).max(20).optional() }).strict().optional(),
    vault_ids: z.array(VaultId).max(20).optional(),
    /** A new ceiling (raise it to continue), or null to remove it; never added to a session created without one. */
    budget: BudgetLimit.nullable().optional(),
  })
  .strict();

/** Hosts of the package registries a `limited` environment with `allow_package_managers` may reach. */
export const PACKAGE_MANAGER_HOSTS = ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'deb.debian.org', 'security.debian.org', 'crates.io', 'static.crates.io', 'index.crates.io', 'rubygems.org', 'proxy.golang.org'];

/** The hosts an environment's hands may reach (its `limited` networking); none for anything else. */
export function environmentHosts(config: EnvironmentConfig): string[] {
  if (config.type !== 'cloud' || config.networking.type !== 'limited') return [];
  return [...config.networking.allowed_hosts, ...(config.networking.allow_package_managers ? PACKAGE_MANAGER_HOSTS : [])];
}

/** What this server lets environments have (its settings, which the UI learns from the API). */
export interface EnvironmentSupport {
  /** `PADDOCK_ALLOW_UNRESTRICTED_NETWORK`. */
  allowUnrestrictedNetwork: boolean;
}

/**
 * Why a session cannot run in this environment here, or null. Paddock's hands are sandboxes that
 * reach only listed hosts unless the server allows unrestricted networking, and it installs no
 * packages yet: asking for either is refused by name rather than quietly run without.
 */
export function unsupportedEnvironment(config: EnvironmentConfig, support: EnvironmentSupport): string | null {
  // Its tools run on its workers (the work queue), whatever this server's hands may do.
  if (config.type === 'self_hosted') return null;
  if (config.networking.type === 'unrestricted' && !support.allowUnrestrictedNetwork) {
    return 'asks for unrestricted networking, which this server does not allow (PADDOCK_ALLOW_UNRESTRICTED_NETWORK is off): use limited networking with allowed_hosts, or ask the operator to set PADDOCK_ALLOW_UNRESTRICTED_NETWORK=1';
  }
  const asked = Object.entries(config.packages).filter(([k, v]) => k !== 'type' && Array.isArray(v) && v.length > 0).map(([k]) => k);
  if (asked.length > 0) return `lists packages (${asked.join(', ')}), which Paddock does not install into hands yet: install them from a command, with allow_package_managers`;
  return null;
}
