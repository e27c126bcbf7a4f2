import { type AgentTool, type CustomTool, routeTool } from '~/lib/toolset';
import type { ToolSpec } from '~/lib/hand';

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

export const BRAIN_TOOLS: readonly ToolSpec[] = [
  {
    name: 'bash',
    description: 'Run a shell command in the workspace. Returns stdout, stderr and the exit code.',
    input_schema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line.' },
        timeout_ms: { type: 'integer', description: 'Kill the command after this long (default 120000).' },
        ...handArg,
      },
      required: ['command'],
    },
  },
  {
    name: 'read',
    description: 'Read a text file from the workspace, optionally a line range (1-based, inclusive).',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, start_line: { type: 'integer' }, end_line: { type: 'integer' }, ...handArg },
      required: ['path'],
    },
  },
  {
    name: 'write',
    description: 'Create or overwrite a file in the workspace with the given content.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' }, ...handArg },
      required: ['path', 'content'],
    },
  },
  {
    name: 'edit',
    description: 'Replace one exact, unique occurrence of old_text with new_text in a file.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' }, ...handArg },
      required: ['path', 'old_text', 'new_text'],
    },
  },
  {
    name: 'glob',
    description: 'List workspace files matching a glob pattern such as "src/**/*.ts".',
    input_schema: { type: 'object', properties: { pattern: { type: 'string' }, ...handArg }, required: ['pattern'] },
  },
  {
    name: 'grep',
    description: 'Search file contents for a regular expression; returns path:line: text matches.',
    input_schema: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string', description: 'Folder or file to search (default: all).' }, ...handArg },
      required: ['pattern'],
    },
  },
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
 * The tools an agent's model sees: its enabled toolset tools (Paddock's hand tools included)
 * in a fixed order, then its custom tools. The same agent version always gives the same list,
 * so the request prefix stays byte-stable for prompt caching.
 */
export function toolSpecsFor(tools: readonly AgentTool[]): ToolSpec[] {
  const builtIn = BRAIN_TOOLS.filter((t) => routeTool(tools, t.name).kind === 'toolset');
  const custom = tools
    .filter((t): t is CustomTool => t.type === 'custom')
    .map((t): ToolSpec => {
      const { properties, required, ...rest } = t.input_schema;
      return { name: t.name, description: t.description, input_schema: { ...rest, type: 'object', properties: properties ?? {}, ...(required ? { required } : {}) } };
    });
  return [...builtIn, ...custom];
}
