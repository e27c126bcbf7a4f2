import { z } from 'zod';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import { type AgentTool, PADDOCK_TOOLS, TOOLSET_TOOLS, toolsetConfig } from '~/lib/toolset';

/**
 * The docs widget (`public/embed.js` + `/embed/<agent>`): an agent's chat that other sites embed.
 * Its settings are the operator's, per agent, beside the agent (not part of the Managed Agents
 * agent shape): whether it is on, which origins may embed it, the environment its sessions run in,
 * and the budgets and rate limits each anonymous visitor gets.
 */

/** The header the widget's API requests carry the visitor token in (subscriptions: connection param `visitor`). */
export const VISITOR_HEADER = 'x-paddock-visitor';

/** What a visitor gets when a conversation has spent its budget (the widget shows it politely). */
export const BUDGET_SPENT = 'this conversation has reached its limit';

/**
 * An origin as a browser sends it (`https://docs.example.com`, `http://127.0.0.1:4020`): scheme,
 * host and port only, lowercase, no default port, no path. Null when it is no http(s) origin.
 */
export function normalizeOrigin(raw: string): string | null {
  const s = raw.trim();
  if (s.length === 0 || s.length > 300) return null;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password) return null;
  // Only an origin: anything after it is a mistake worth refusing rather than guessing.
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || s.endsWith('/')) return null;
  return u.origin.toLowerCase();
}

export const WidgetOrigin = z
  .string()
  .max(300)
  .transform((s, ctx) => {
    const o = normalizeOrigin(s);
    if (o === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an origin: http(s)://host[:port], nothing after it' });
      return z.NEVER;
    }
    return o;
  });

/** Suggested questions a widget offers at most. */
export const MAX_SUGGESTIONS = 3;

/** The owner's settings for one agent's widget. */
export const WidgetSettingsInput = z.object({
  enabled: z.boolean(),
  /** Origins whose pages may embed it; any other is refused (CSP frame-ancestors and every request). */
  allowed_origins: z.array(WidgetOrigin).max(50),
  /** The environment its sessions run in (server-side hands only). */
  environment_id: z.string().regex(/^env_[A-Za-z0-9]{1,64}$/, 'must be an environment id (env_…)'),
  /** A conversation ends politely once its model usage passes this many tokens (input + output + cache). */
  max_tokens_per_session: z.number().int().min(1_000).max(10_000_000),
  /** … or once it is this many minutes old. */
  max_minutes_per_session: z.number().int().min(1).max(24 * 60),
  /** Messages and new conversations one visitor may send a minute. */
  visitor_per_minute: z.number().int().min(1).max(600),
  /** The same, for all visitors behind one IP address. */
  ip_per_minute: z.number().int().min(1).max(6_000),
  /** New conversations the agent's widget starts an hour, all visitors together (a cost bound no address forgery escapes). */
  sessions_per_hour: z.number().int().min(1).max(100_000),
  /** The name the widget's header shows (empty: the agent's own name). Defaults keep rows saved before these fields readable. */
  display_name: z.string().trim().max(60, 'at most 60 characters').default(''),
  /** The first thing a visitor reads, before asking anything (empty: a plain "Ask … a question."). */
  greeting: z.string().trim().max(500, 'at most 500 characters').default(''),
  /** Up to three questions a visitor can ask with one click. */
  suggested_questions: z
    .array(z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters'))
    .max(MAX_SUGGESTIONS, `at most ${MAX_SUGGESTIONS} questions`)
    .default([]),
  /** Whether visitors see the names (and inputs and output) of the tools the agent runs; off: "working…" only. */
  show_tool_names: z.boolean().default(false),
});
export type WidgetSettingsInput = z.infer<typeof WidgetSettingsInput>;

export interface WidgetSettings extends WidgetSettingsInput {
  agent_id: string;
  updated_at: string;
}

export const WIDGET_DEFAULTS: Omit<WidgetSettingsInput, 'environment_id'> = {
  enabled: false,
  allowed_origins: [],
  max_tokens_per_session: 200_000,
  max_minutes_per_session: 30,
  visitor_per_minute: 10,
  ip_per_minute: 60,
  sessions_per_hour: 200,
  display_name: '',
  greeting: '',
  suggested_questions: [],
  show_tool_names: false,
};

/** Whether a widget with these settings may be used from `origin` (already normalized). */
export function widgetAllows(settings: Pick<WidgetSettings, 'enabled' | 'allowed_origins'> | null, origin: string): boolean {
  return settings !== null && settings.enabled && settings.allowed_origins.includes(origin);
}

export interface BudgetUse {
  tokens: number;
  /** Epoch ms the session was created. */
  createdAt: number;
}

/** Which budget a widget conversation has spent, or null while it may go on. */
export function spentBudget(s: Pick<WidgetSettings, 'max_tokens_per_session' | 'max_minutes_per_session'>, use: BudgetUse, now: number): 'tokens' | 'time' | null {
  if (use.tokens >= s.max_tokens_per_session) return 'tokens';
  if (now - use.createdAt >= s.max_minutes_per_session * 60_000) return 'time';
  return null;
}

/** The snippet a site adds (shown on the agents page, and in the README). */
export function embedSnippet(publicOrigin: string, agentId: string): string {
  return `<script src="${publicOrigin}/embed.js" data-agent="${agentId}" async></script>`;
}

/**
 * The agent's tools that run without asking anyone: in a widget, an anonymous visitor's message is
 * enough to run them. Toolset tools by name, an MCP server's as `server/tool` (`server/*` for its
 * default); custom tools are the client's (the widget runs none), so they are not listed.
 */
export function toolsRunWithoutAsking(tools: readonly AgentTool[]): string[] {
  const out: string[] = [];
  for (const name of [...TOOLSET_TOOLS, ...PADDOCK_TOOLS]) {
    const c = toolsetConfig(tools, name);
    if (c?.enabled && c.permission_policy.type === 'always_allow') out.push(name);
  }
  for (const t of tools) {
    if (t.type !== 'mcp_toolset') continue;
    const def = t.default_config.enabled && t.default_config.permission_policy.type === 'always_allow';
    if (def) out.push(`${t.mcp_server_name}/*`);
    for (const c of t.configs) if (c.enabled && c.permission_policy.type === 'always_allow' && !def) out.push(`${t.mcp_server_name}/${c.name}`);
  }
  return out;
}

/** What a visitor is shown in place of a hidden tool's name. */
export const HIDDEN_TOOL = 'tool';

/**
 * An event as a visitor of a widget that hides its tools receives it: a call keeps its id and
 * place but loses its name, server, input and hand; a result keeps whether it failed but not its
 * output. Done on the server, so the payload itself carries none of it. Everything else as stored.
 */
export function visitorEvent(e: StoredEvent, showTools: boolean): StoredEvent {
  if (showTools) return e;
  switch (e.type) {
    case 'agent.tool_use': {
      const { hand: _hand, ...rest } = e;
      return { ...rest, name: HIDDEN_TOOL, input: {} };
    }
    case 'agent.mcp_tool_use':
      return { ...e, name: HIDDEN_TOOL, mcp_server_name: HIDDEN_TOOL, input: {} };
    case 'agent.custom_tool_use':
      return { ...e, name: HIDDEN_TOOL, input: {} };
    case 'agent.tool_result': {
      const { hand: _hand, ...rest } = e;
      return { ...rest, content: [] };
    }
    case 'agent.mcp_tool_result':
    case 'user.tool_result':
    case 'user.custom_tool_result':
      return { ...e, content: [] };
    // A lost hand's reason is its stderr: it can name anything the tool ran.
    case 'hand.lost':
      return { ...e, reason: '' };
    default:
      return e;
  }
}

/** A live delta as such a visitor receives it: a call's streamed input (it names the tool) and hand progress are not sent. */
export function visitorDelta(d: LiveDelta, showTools: boolean): LiveDelta | null {
  if (showTools) return d;
  return d.kind === 'tool_input' || d.kind === 'hand' ? null : d;
}
