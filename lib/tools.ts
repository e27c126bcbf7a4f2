import { type AgentTool, type CustomTool, routeTool } from '~/lib/toolset';
import type { ToolSpec } from '~/lib/hand';
import { WebFetchInput, jsonSchemaOf, toInputSchema } from '~/lib/tool-inputs';
import { type McpServerListing, mcpToolsFor } from '~/lib/mcp-tools';

/**
 * The tool set the brain sees. It is fixed (it does not change as hands come and go) so the
 * request prefix stays byte-stable and prompt caching keeps hitting.
 */
const handArg = {
  hand: { type: 'string', description: "Which hand runs the call (default: the session's current hand)." },
};

/** Tools that run on a hand (the rest are handled by the harness itself). */
export const HAND_TOOLS = ['bash', 'read', 'write', 'edit', 'glob', 'grep'] as const;
export type HandToolName = (typeof HAND_TOOLS)[number];
export function isHandTool(name: string): name is HandToolName {
  return (HAND_TOOLS as readonly string[]).includes(name);
}

const HAND_TOOL_DESCRIPTIONS: Record<HandToolName, string> = {
  bash: 'Run a shell command in the workspace. Returns stdout, stderr and the exit code.',
  read: 'Read a text file from the workspace, optionally only a range of lines (view_range).',
  write: 'Create or overwrite a file in the workspace with the given content.',
  edit: 'Replace text in a file: old_string must occur exactly once (or set replace_all to replace every occurrence).',
  glob: 'List workspace files matching a glob pattern such as "src/**/*.ts", optionally only under a folder (path). Answers are paths relative to the workspace.',
  grep: 'Search file contents for a regular expression; returns path:line: text matches.',
};

/** A hand tool's spec: its input schema derived from the one zod schema every hand parses with. */
function handTool(name: HandToolName): ToolSpec {
  const schema = toInputSchema(name);
  return {
    name,
    description: HAND_TOOL_DESCRIPTIONS[name],
    input_schema: { ...schema, properties: { ...schema.properties, ...handArg } },
  };
}

export const BRAIN_TOOLS: readonly ToolSpec[] = [
  ...HAND_TOOLS.map(handTool),
  {
    name: 'provision',
    description:
      'Start a fresh hand (execution environment with its own empty workspace) and make it the current one. ' +
      'Use it when a hand was lost, or when you need a separate environment. kind: "sandbox" (default), "memory" (in-process files only, no shell), or "remote" with a configured endpoint name.',
    input_schema: {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['sandbox', 'memory', 'remote', 'local'] },
        endpoint: { type: 'string', description: 'For kind "remote": the name of an endpoint the operator configured.' },
        resources: {
          type: 'object',
          description:
            "Lower limits for a sandbox hand (never above the operator's): memory_mb (the whole hand, and address space per command; node needs about 1024), cpu_seconds (CPU time per command).",
          properties: { memory_mb: { type: 'integer', minimum: 16 }, cpu_seconds: { type: 'integer', minimum: 1 } },
        },
      },
    },
  },
  {
    name: 'release',
    description: 'Shut a hand down when you no longer need it. Its workspace is discarded.',
    input_schema: { type: 'object', properties: { hand: { type: 'string' } }, required: ['hand'] },
  },
  {
    name: 'list_hands',
    description: "List this session's hands with their kind, status and age; the current one is marked.",
    input_schema: { type: 'object', properties: {} },
  },
];

/**
 * web_fetch runs in the harness (any hand, or none): offered only to agents whose toolset enables
 * it, after the hand tools, so adding it never moves the others.
 */
export const WEB_FETCH_TOOL: ToolSpec = {
  name: 'web_fetch',
  description:
    'Fetch a web page or file by URL (http or https) and return its content as text: HTML as Markdown, text and JSON as they are; other content is described, not returned. ' +
    "Only hosts the session's network policy allows are reached. Long content is truncated.",
  input_schema: jsonSchemaOf(WebFetchInput),
};

/** Every toolset tool the model may be given, in the one order it always sees them in. */
const TOOLSET_SPECS: readonly ToolSpec[] = [...BRAIN_TOOLS, WEB_FETCH_TOOL];

/**
 * The tools an agent's model sees: its enabled toolset tools (Paddock's hand tools included)
 * in a fixed order, then its MCP servers' enabled tools (`mcp__<server>__<tool>`, from the listing
 * stored in the log), then its custom tools. The same agent version and listing always give the
 * same list, so the request prefix stays byte-stable for prompt caching.
 */
export function toolSpecsFor(tools: readonly AgentTool[], mcpListed: readonly McpServerListing[] = []): ToolSpec[] {
  const builtIn = TOOLSET_SPECS.filter((t) => routeTool(tools, t.name).kind === 'toolset');
  const custom = tools
    .filter((t): t is CustomTool => t.type === 'custom')
    .map((t): ToolSpec => {
      const { properties, required, ...rest } = t.input_schema;
      return { name: t.name, description: t.description, input_schema: { ...rest, type: 'object', properties: properties ?? {}, ...(required ? { required } : {}) } };
    });
  return [...builtIn, ...mcpToolsFor(tools, mcpListed).map((t) => t.spec), ...custom];
}
