import { z } from 'zod';
import { type UrlSources, UrlSourcesParams, clientToolNames, normalizeUrlSources } from '~/lib/url-sources';

/**
 * An agent's `tools[]` as the Managed Agents API defines them (`@anthropic-ai/sdk`
 * `resources/beta/agents/agents.d.ts`): the built-in toolset with per-tool enablement and
 * permission policies, MCP toolsets, and custom tools the client answers. Params (what a client
 * sends) are normalized into the full stored shape, defaults filled in, so an agent version
 * always reads back the same.
 */

export const PermissionPolicy = z.discriminatedUnion('type', [
  z.object({ type: z.literal('always_allow') }),
  z.object({ type: z.literal('always_ask') }),
  z.object({ type: z.literal('auto') }),
]);
export type PermissionPolicy = z.infer<typeof PermissionPolicy>;

/** The built-in toolset's tools, under the names Claude is trained on. */
export const TOOLSET_TOOLS = ['bash', 'read', 'write', 'edit', 'glob', 'grep', 'web_fetch', 'web_search'] as const;
export type ToolsetToolName = (typeof TOOLSET_TOOLS)[number];

/** Paddock's own hand-management tools: part of the toolset, and can be disabled the same way. */
export const PADDOCK_TOOLS = ['provision', 'release', 'list_hands'] as const;
export type PaddockToolName = (typeof PADDOCK_TOOLS)[number];

const ToolName = z.enum([...TOOLSET_TOOLS, ...PADDOCK_TOOLS]);

/** A plain hostname (`docs.example.com`): no scheme, port or path. */
const Domain = z
  .string()
  .max(253)
  .regex(/^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/, 'must be a plain hostname such as docs.example.com (no scheme, port, path or wildcard)');
const DomainList = z.array(Domain).min(1, 'an empty list is rejected: omit the field instead').max(64, 'at most 64 entries');

const ToolConfigParams = z
  .object({
    name: ToolName,
    type: ToolName.optional(),
    enabled: z.boolean().nullish(),
    permission_policy: PermissionPolicy.nullish(),
    allowed_domains: DomainList.optional(),
    blocked_domains: DomainList.optional(),
    max_content_tokens: z.number().int().positive().nullish(),
    url_sources: UrlSourcesParams.nullish(),
  })
  .strict()
  .refine((c) => c.type === undefined || c.type === c.name, { message: 'type must equal name', path: ['type'] })
  .refine((c) => !(c.allowed_domains && c.blocked_domains), { message: 'allowed_domains and blocked_domains cannot be combined: use one of them', path: ['blocked_domains'] })
  .refine((c) => c.url_sources == null || c.name === 'web_fetch', { message: 'url_sources is a setting of web_fetch only', path: ['url_sources'] });

const DefaultConfigParams = z.object({ enabled: z.boolean().nullish(), permission_policy: PermissionPolicy.nullish() }).strict();

export const AgentToolsetParams = z
  .object({
    type: z.literal('agent_toolset_20260401'),
    default_config: DefaultConfigParams.nullish(),
    configs: z.array(ToolConfigParams).max(TOOLSET_TOOLS.length + PADDOCK_TOOLS.length).optional(),
  })
  .strict();

export const McpToolsetParams = z
  .object({
    type: z.literal('mcp_toolset'),
    mcp_server_name: z.string().min(1).max(64),
    default_config: DefaultConfigParams.nullish(),
    configs: z
      .array(z.object({ name: z.string().min(1).max(128), enabled: z.boolean().nullish(), permission_policy: PermissionPolicy.nullish() }).strict())
      .max(500)
      .optional(),
  })
  .strict();

/** A name the Messages API accepts for a tool. */
export const CUSTOM_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const CustomToolParams = z
  .object({
    type: z.literal('custom'),
    name: z.string().regex(CUSTOM_TOOL_NAME, 'must be 1-64 letters, digits, _ or -'),
    description: z.string().min(1).max(10_000),
    input_schema: z.looseObject({ type: z.literal('object'), properties: z.record(z.string(), z.unknown()).nullish(), required: z.array(z.string()).nullish() }),
  })
  .strict();

export const AgentToolParams = z.discriminatedUnion('type', [AgentToolsetParams, McpToolsetParams, CustomToolParams]);
export type AgentToolParams = z.input<typeof AgentToolParams>;

/** Toolset tools Paddock does not offer the model yet: enabling one by name is refused, saying why. */
export const NOT_BUILT = {
  web_search: 'web_search is not supported by Paddock: it has no search provider (the model is never offered it)',
} as const;

/**
 * An agent's `tools`: each name means one tool. One toolset at most, each of its configs names a
 * tool of the toolset once, and a custom tool may not take a name the toolset (or another custom
 * tool) has: the model would be given two tools of one name.
 */
export const AgentToolsParams = z
  .array(AgentToolParams)
  .max(128)
  .superRefine((tools, ctx) => {
    const builtIn = new Set<string>(ToolName.options);
    const customNames = new Set<string>();
    let toolsets = 0;
    tools.forEach((t, i) => {
      if (t.type === 'agent_toolset_20260401') {
        if (++toolsets > 1) ctx.addIssue({ code: 'custom', path: [i], message: 'at most one agent_toolset_20260401 per agent' });
        const seen = new Set<string>();
        (t.configs ?? []).forEach((c, j) => {
          if (!builtIn.has(c.name)) ctx.addIssue({ code: 'custom', path: [i, 'configs', j, 'name'], message: `not a tool of the toolset (${[...builtIn].join(', ')})` });
          else if (seen.has(c.name)) ctx.addIssue({ code: 'custom', path: [i, 'configs', j, 'name'], message: `${c.name} is configured twice` });
          else if (c.enabled === true && c.name in NOT_BUILT) ctx.addIssue({ code: 'custom', path: [i, 'configs', j, 'enabled'], message: NOT_BUILT[c.name as keyof typeof NOT_BUILT] });
          seen.add(c.name);
          // client_tool_results names custom tools: each must be one of this agent's.
          clientToolNames(c.url_sources).forEach((name, k) => {
            if (!tools.some((x) => x.type === 'custom' && x.name === name)) {
              ctx.addIssue({ code: 'custom', path: [i, 'configs', j, 'url_sources', 'client_tool_results', 'tools', k, 'name'], message: `${name} is not a custom tool of this agent` });
            }
          });
        });
      } else if (t.type === 'custom') {
        if (builtIn.has(t.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `${t.name} is a toolset tool's name: pick another` });
        else if (customNames.has(t.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `two custom tools are named ${t.name}` });
        customNames.add(t.name);
      }
    });
  });

// ── the stored (normalized) shapes ──────────────────────────────────────────
export interface ToolConfig {
  name: ToolsetToolName | PaddockToolName;
  type: ToolsetToolName | PaddockToolName;
  enabled: boolean;
  permission_policy: PermissionPolicy;
  allowed_domains?: string[];
  blocked_domains?: string[];
  max_content_tokens?: number | null;
  /** web_fetch only: which parts of the conversation may contribute URLs (null: every part, and any URL). */
  url_sources?: UrlSources | null;
}
export interface DefaultConfig {
  enabled: boolean;
  permission_policy: PermissionPolicy;
}
export interface AgentToolset {
  type: 'agent_toolset_20260401';
  default_config: DefaultConfig;
  configs: ToolConfig[];
}
export interface McpToolset {
  type: 'mcp_toolset';
  mcp_server_name: string;
  default_config: DefaultConfig;
  configs: Array<{ name: string; enabled: boolean; permission_policy: PermissionPolicy }>;
}
export interface CustomTool {
  type: 'custom';
  name: string;
  description: string;
  input_schema: { type: 'object'; properties?: Record<string, unknown> | null; required?: string[] | null; [k: string]: unknown };
}
export type AgentTool = AgentToolset | McpToolset | CustomTool;

const ALLOW: PermissionPolicy = { type: 'always_allow' };
const ASK: PermissionPolicy = { type: 'always_ask' };

/** Fills in defaults: the toolset allows by default, an MCP toolset asks (its tools are someone else's). */
export function normalizeTools(params: readonly z.output<typeof AgentToolParams>[]): AgentTool[] {
  return params.map((t): AgentTool => {
    switch (t.type) {
      case 'agent_toolset_20260401': {
        const def: DefaultConfig = { enabled: t.default_config?.enabled ?? true, permission_policy: t.default_config?.permission_policy ?? ALLOW };
        return {
          type: t.type,
          default_config: def,
          configs: (t.configs ?? []).map((c) => ({
            name: c.name,
            type: c.name,
            enabled: c.enabled ?? def.enabled,
            permission_policy: c.permission_policy ?? def.permission_policy,
            ...(c.allowed_domains ? { allowed_domains: c.allowed_domains } : {}),
            ...(c.blocked_domains ? { blocked_domains: c.blocked_domains } : {}),
            ...(c.name === 'web_fetch' ? { max_content_tokens: c.max_content_tokens ?? null, url_sources: normalizeUrlSources(c.url_sources) } : {}),
          })),
        };
      }
      case 'mcp_toolset': {
        const def: DefaultConfig = { enabled: t.default_config?.enabled ?? true, permission_policy: t.default_config?.permission_policy ?? ASK };
        return {
          type: t.type,
          mcp_server_name: t.mcp_server_name,
          default_config: def,
          configs: (t.configs ?? []).map((c) => ({ name: c.name, enabled: c.enabled ?? def.enabled, permission_policy: c.permission_policy ?? def.permission_policy })),
        };
      }
      case 'custom':
        return { type: 'custom', name: t.name, description: t.description, input_schema: t.input_schema };
    }
  });
}

/** What a session does with a tool the model called. */
export type ToolRoute =
  | { kind: 'toolset'; name: ToolsetToolName | PaddockToolName; permission: 'allow' | 'ask'; config: ToolConfig | null }
  | { kind: 'custom'; name: string }
  | { kind: 'unknown' };

/** The toolset entry's config for one tool, defaults applied; null when the agent has no toolset. */
export function toolsetConfig(tools: readonly AgentTool[], name: ToolsetToolName | PaddockToolName): ToolConfig | null {
  const set = tools.find((t): t is AgentToolset => t.type === 'agent_toolset_20260401');
  if (!set) return null;
  return set.configs.find((c) => c.name === name) ?? { name, type: name, ...set.default_config };
}

/** How a call to `name` is handled under this agent's tools: its permission, or that it is the client's (custom). */
export function routeTool(tools: readonly AgentTool[], name: string): ToolRoute {
  const custom = tools.find((t): t is CustomTool => t.type === 'custom' && t.name === name);
  if (custom) return { kind: 'custom', name };
  const parsed = ToolName.safeParse(name);
  if (!parsed.success) return { kind: 'unknown' };
  const config = toolsetConfig(tools, parsed.data);
  if (!config?.enabled) return { kind: 'unknown' };
  // `auto` would need a classifier model; until then it asks, which never runs a call unapproved.
  return { kind: 'toolset', name: parsed.data, permission: config.permission_policy.type === 'always_allow' ? 'allow' : 'ask', config };
}

/** The default agent's tools: the whole toolset, allowed. */
export const DEFAULT_TOOLS: AgentTool[] = normalizeTools([{ type: 'agent_toolset_20260401' }]);
