import { z } from 'zod';
import { ToolError } from '~/lib/hand';

/**
 * The hand tools' inputs, once for every hand (paddock-hand, the browser engines, the memory hand,
 * the server-filesystem adapter) and for the model: `BRAIN_TOOLS` (lib/tools.ts) derives the JSON
 * Schemas the model sees from these. The names are those of Anthropic's `agent_toolset_20260401`
 * (`file_path`, `view_range`, `old_string`/`new_string`), the ones Claude is trained on.
 *
 * Unknown keys, such as the brain's `hand`, are stripped. Paddock's earlier names (`path`,
 * `start_line`/`end_line`, `old_text`/`new_text`) are still accepted: calls stored in a log before
 * the rename are re-run when a session resumes. They are never advertised (the JSON Schema is the
 * canonical object's, see `toInputSchema`).
 */
const FilePath = z.string().min(1).max(4096).describe('The file, relative to the workspace (or absolute inside it).');

export const BashInput = z.object({
  command: z.string().min(1).describe('The command line, run by bash in the workspace folder.'),
  timeout_ms: z.number().int().positive().optional().describe('Kill the command after this many milliseconds (default 120000, at most 600000).'),
  restart: z
    .boolean()
    .optional()
    .describe('Start from a fresh shell. Every command already runs in a fresh shell (no variables or cd carry over), so this changes nothing.'),
});

/** A line number of `view_range`: 1-based; the end may be -1 for "to the end of the file". */
const LineNumber = z.number().int();

export const ReadInput = z.object({
  file_path: FilePath,
  view_range: z
    .array(LineNumber)
    .length(2)
    .optional()
    .describe('Only lines start to end: [start, end], 1-based and inclusive; end -1 reads to the end of the file. Default: the whole file.'),
});

export const WriteInput = z.object({
  file_path: FilePath.describe('The file to create or overwrite, relative to the workspace; missing folders are created.'),
  content: z.string().describe('The whole new content of the file.'),
});

export const EditInput = z.object({
  file_path: FilePath,
  old_string: z.string().min(1).describe('The exact text to replace, whitespace included. Unless replace_all, it must occur exactly once: include enough surrounding lines to make it unique.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string instead of exactly one (default false).'),
});

export const GlobInput = z.object({
  pattern: z.string().min(1).describe('A glob such as "src/**/*.ts", relative to path when one is given; node_modules and .git are skipped unless the pattern names them.'),
  path: z.string().min(1).max(4096).optional().describe('The folder to search under, relative to the workspace (default: the whole workspace).'),
});

export const GrepInput = z.object({
  pattern: z.string().min(1).describe('A regular expression (JavaScript syntax), matched line by line.'),
  path: z.string().min(1).max(4096).optional().describe('The folder or file to search, relative to the workspace (default: the whole workspace).'),
});

/** web_fetch's input (run by the harness, not a hand). */
export const WebFetchInput = z.object({
  url: z.string().min(1).max(8192).describe('The http or https URL to fetch, written exactly as it appeared (a user message, a tool result).'),
});

/** Old key → new key, per tool; a key is only moved when the new one is absent. */
const ALIASES: Record<string, Record<string, string>> = {
  read: { path: 'file_path' },
  write: { path: 'file_path' },
  edit: { path: 'file_path', old_text: 'old_string', new_text: 'new_string' },
};

function withAliases<T extends z.ZodObject>(tool: string, schema: T) {
  return z.preprocess((raw) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
    const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
    for (const [old, name] of Object.entries(ALIASES[tool] ?? {})) {
      if (old in input && !(name in input)) input[name] = input[old];
      if (old !== name) delete input[old];
    }
    // read's old range: start_line/end_line (each optional) → view_range [start, end | -1].
    if (tool === 'read' && (input.start_line !== undefined || input.end_line !== undefined) && input.view_range === undefined) {
      input.view_range = [input.start_line ?? 1, input.end_line ?? -1];
    }
    delete input.start_line;
    delete input.end_line;
    return input;
  }, schema);
}

/** What a hand parses a call with: the toolset's names, and the old ones as aliases. */
export const TOOL_INPUTS = {
  bash: withAliases('bash', BashInput),
  read: withAliases('read', ReadInput),
  write: withAliases('write', WriteInput),
  edit: withAliases('edit', EditInput),
  glob: withAliases('glob', GlobInput),
  grep: withAliases('grep', GrepInput),
};

export type ToolInputName = keyof typeof TOOL_INPUTS;
export type ToolInput<N extends ToolInputName> = z.output<(typeof TOOL_INPUTS)[N]>;

/** The file tools only (hands without a shell). */
export const FileToolInputs = {
  read: TOOL_INPUTS.read,
  write: TOOL_INPUTS.write,
  edit: TOOL_INPUTS.edit,
  glob: TOOL_INPUTS.glob,
  grep: TOOL_INPUTS.grep,
};

/** Parses a call's input, or throws a `ToolError` naming the tool and what is wrong. */
export function parseToolInput<N extends ToolInputName>(tool: N, input: unknown): ToolInput<N> {
  const r = TOOL_INPUTS[tool].safeParse(input);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
    throw new ToolError(`${tool}: invalid input: ${issues}`);
  }
  return r.data as ToolInput<N>;
}

/**
 * The JSON Schema of a tool's input as the model (and an MCP client) sees it: the canonical names
 * only. Drops what zod adds that only makes the prompt longer: `$schema`, and the safe-integer
 * bounds of every integer.
 */
export function toInputSchema(tool: ToolInputName): InputSchema {
  return jsonSchemaOf(TOOL_INPUTS[tool]);
}

type InputSchema = { type: 'object'; properties: Record<string, unknown>; required?: string[] };

/** The same for any input schema (the harness's own tools: web_fetch). */
export function jsonSchemaOf(schema: z.ZodType): InputSchema {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  return trimIntegerBounds(json) as InputSchema;
}

function trimIntegerBounds(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(trimIntegerBounds);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'maximum' && x === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'minimum' && x === Number.MIN_SAFE_INTEGER) continue;
    out[k] = trimIntegerBounds(x);
  }
  return out;
}
