import { z } from 'zod';
import type { StoredEvent } from '~/lib/events';

/**
 * web_fetch's `url_sources` (`BetaManagedAgentsWebFetchURLSources` in the SDK): which parts of the
 * conversation may contribute URLs the tool fetches. Params take the shorthand `'all'`/`'none'` or
 * the object form; the stored config is always the object form, a key not set being null (which
 * allows that source). Enforcement is here too, pure over the session log.
 */

const ToolReference = z.object({ type: z.literal('tool_reference'), name: z.string().min(1).max(128) }).strict();
const ToolList = z
  .array(ToolReference)
  .min(1, 'an empty list is rejected: use "none" or "all" instead')
  .max(128)
  .refine((refs) => new Set(refs.map((r) => r.name)).size === refs.length, { message: 'each tool may be named once' });

const All = z.object({ type: z.literal('all') }).strict();
const None = z.object({ type: z.literal('none') }).strict();
const ToolFilterObject = z.discriminatedUnion('type', [All, None, z.object({ type: z.literal('only'), tools: ToolList }).strict(), z.object({ type: z.literal('except'), tools: ToolList }).strict()]);
const UserInputObject = z.discriminatedUnion('type', [All, None]);

const Shorthand = z.enum(['all', 'none']);
const ToolFilterParams = z.union([Shorthand, ToolFilterObject]);
const UserInputParams = z.union([Shorthand, UserInputObject]);

export type UrlSourceToolFilter = z.output<typeof ToolFilterObject>;
export type UrlSourceUserInput = z.output<typeof UserInputObject>;

/** The stored (object) form. */
export interface UrlSources {
  user_input: UrlSourceUserInput | null;
  client_tool_results: UrlSourceToolFilter | null;
  server_tool_results: UrlSourceToolFilter | null;
}

/** The tools whose results may be named under `server_tool_results`. */
export const SERVER_TOOLS = ['web_search', 'web_fetch'] as const;

export const UrlSourcesParams = z
  .object({
    user_input: UserInputParams.nullish(),
    client_tool_results: ToolFilterParams.nullish(),
    server_tool_results: ToolFilterParams.nullish(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const type = (v: unknown) => (typeof v === 'string' ? v : (v as { type?: string } | null | undefined)?.type);
    if (type(s.user_input) === 'none' && type(s.client_tool_results) === 'none' && type(s.server_tool_results) === 'none') {
      ctx.addIssue({ code: 'custom', message: 'every source is "none": web_fetch could fetch nothing (disable the tool instead)' });
    }
    const server = s.server_tool_results;
    if (server && typeof server === 'object' && (server.type === 'only' || server.type === 'except')) {
      server.tools.forEach((t, i) => {
        if (!(SERVER_TOOLS as readonly string[]).includes(t.name)) ctx.addIssue({ code: 'custom', path: ['server_tool_results', 'tools', i, 'name'], message: `must be ${SERVER_TOOLS.join(' or ')}` });
      });
    }
  });
export type UrlSourcesParams = z.input<typeof UrlSourcesParams>;

function filterObject<T extends { type: string }>(v: 'all' | 'none' | T | null | undefined): T | { type: 'all' } | { type: 'none' } | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? { type: v } : v;
}

/** Params → the stored object form (null when not set: every source allowed). */
export function normalizeUrlSources(p: z.output<typeof UrlSourcesParams> | null | undefined): UrlSources | null {
  if (!p) return null;
  return {
    user_input: filterObject(p.user_input),
    client_tool_results: filterObject(p.client_tool_results),
    server_tool_results: filterObject(p.server_tool_results),
  };
}

/** Custom tool names an `only`/`except` list of `client_tool_results` names (each must be a custom tool of the agent). */
export function clientToolNames(p: z.output<typeof UrlSourcesParams> | null | undefined): string[] {
  const c = p?.client_tool_results;
  return c && typeof c === 'object' && (c.type === 'only' || c.type === 'except') ? c.tools.map((t) => t.name) : [];
}

const isAll = (f: { type: string } | null) => f === null || f.type === 'all';

/** Whether the sources restrict anything at all (null, or every key all, does not). */
export function restrictsUrls(s: UrlSources | null): s is UrlSources {
  return s !== null && !(isAll(s.user_input) && isAll(s.client_tool_results) && isAll(s.server_tool_results));
}

function admits(filter: UrlSourceToolFilter | null, tool: string): boolean {
  if (filter === null) return true;
  switch (filter.type) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'only':
      return filter.tools.some((t) => t.name === tool);
    case 'except':
      return !filter.tools.some((t) => t.name === tool);
  }
}

type Content = ReadonlyArray<{ type: string; text?: string; source?: { type: string; data?: unknown } }> | undefined;

/** The text of content blocks: text blocks, and documents whose source is plain text. */
function textOf(content: Content): string {
  return (content ?? [])
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : b.type === 'document' && b.source?.type === 'text' && typeof b.source.data === 'string' ? b.source.data : ''))
    .join('\n');
}

/**
 * Where in the log `url` appears verbatim in a source the config admits, or null when it appears in
 * none: a user message (`user_input`), a custom tool's result (`client_tool_results`, by the
 * custom tool's name), an earlier web_fetch result (`server_tool_results`). Only events before
 * `beforeSeq` (the call's own) count.
 */
export function urlSourceOf(sources: UrlSources, url: string, events: readonly StoredEvent[], beforeSeq: number): 'user_input' | 'client_tool_results' | 'server_tool_results' | null {
  const customNames = new Map<string, string>();
  const toolNames = new Map<string, string>();
  for (const e of events) {
    if (e.seq >= beforeSeq) break;
    switch (e.type) {
      case 'agent.custom_tool_use':
        customNames.set(e.id, e.name);
        break;
      case 'agent.tool_use':
        toolNames.set(e.id, e.name);
        break;
      case 'user.message':
        if (isAll(sources.user_input) && textOf(e.content).includes(url)) return 'user_input';
        break;
      case 'user.custom_tool_result': {
        const name = customNames.get(e.custom_tool_use_id);
        if (name !== undefined && admits(sources.client_tool_results, name) && textOf(e.content).includes(url)) return 'client_tool_results';
        break;
      }
      case 'agent.tool_result': {
        const name = toolNames.get(e.tool_use_id);
        if (name !== undefined && (SERVER_TOOLS as readonly string[]).includes(name) && !e.is_error && admits(sources.server_tool_results, name) && textOf(e.content).includes(url)) return 'server_tool_results';
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** What the model is told when a URL comes from no admitted source. */
export function urlSourcesRefusal(sources: UrlSources): string {
  const describe = (f: { type: string; tools?: { name: string }[] } | null) =>
    f === null ? 'all' : f.type === 'only' || f.type === 'except' ? `${f.type} ${(f.tools ?? []).map((t) => t.name).join(', ')}` : f.type;
  return (
    'the URL does not appear in any source this agent lets web_fetch take URLs from ' +
    `(url_sources: user_input ${describe(sources.user_input)}; client_tool_results ${describe(sources.client_tool_results)}; server_tool_results ${describe(sources.server_tool_results)}): ` +
    'fetch only a URL, written exactly, that an allowed source showed'
  );
}
