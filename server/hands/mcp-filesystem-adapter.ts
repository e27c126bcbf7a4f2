import 'server-only';
import path from 'node:path';
import { type ExecuteContext, ToolError } from '~/lib/hand';
import { SKIPPED_DIRS, globPlan } from '~/lib/glob';
import { checkViewRange, countOccurrences, editedText, lineRange } from '~/lib/text-edits';
import { parseToolInput, type ToolInput } from '~/lib/tool-inputs';
import { grepRegExp } from '~/lib/grep-lines';

/** Performs one MCP tool call for the adapter (already raced against loss, already mapped to errors). */
export type CallFn = (tool: string, args: Record<string, unknown>, ctx: ExecuteContext) => Promise<string>;


/** Grep reads file by file through the server: bound the work and the answer. */
const GREP_MAX_FILES = 2000;
const GREP_MAX_MATCHES = 1000;
const GREP_CONCURRENCY = 8;

const lf = (s: string) => s.replace(/\r\n/g, '\n');

interface TreeEntry {
  name: string;
  type: 'file' | 'directory';
  children?: TreeEntry[];
}

/**
 * Serves the brain's file tools with server-filesystem's tools. That server wants absolute paths
 * inside its allowed directory, so workspace-relative paths are resolved against the first
 * allowed directory, and answers are given back relative to it.
 */
export class FilesystemAdapter {
  private readonly path: typeof path.posix;

  private constructor(
    private readonly tools: Set<string>,
    private readonly call: CallFn,
    private readonly root: string | undefined,
  ) {
    this.path = root && /^[A-Za-z]:|\\/.test(root) ? path.win32 : path.posix;
  }

  static fits(tools: Set<string>): boolean {
    return (tools.has('read_text_file') || tools.has('read_file')) && tools.has('write_file');
  }

  static async create(tools: Set<string>, call: CallFn, ctx: ExecuteContext): Promise<FilesystemAdapter> {
    let root: string | undefined;
    if (tools.has('list_allowed_directories')) {
      // "Allowed directories:\n/abs/one\n/abs/two"
      const text = await call('list_allowed_directories', {}, ctx);
      root = text.split('\n').slice(1).map((l) => l.trim()).find((l) => l.length > 0);
    }
    return new FilesystemAdapter(tools, call, root);
  }

  private get readTool(): string {
    return this.tools.has('read_text_file') ? 'read_text_file' : 'read_file';
  }

  serves(name: string): boolean {
    switch (name) {
      case 'read':
      case 'write':
        return true;
      case 'edit':
        return this.tools.has('edit_file');
      case 'glob':
        return this.tools.has('directory_tree') && this.root !== undefined;
      case 'grep':
        return this.tools.has('directory_tree') && this.tools.has('get_file_info');
      default:
        return false;
    }
  }

  private abs(p: string): string {
    if (this.path.isAbsolute(p) || !this.root) return p;
    return this.path.resolve(this.root, p);
  }

  /** A workspace-relative folder (`''` = the served folder itself); one outside it is refused. */
  private confined(tool: string, p: string): string {
    const r = this.rel(this.abs(p));
    if (this.path.isAbsolute(r) || r === '..' || r.startsWith('../')) throw new ToolError(`${tool}: path ${p} is outside the workspace`);
    return r === '.' ? '' : r;
  }

  private rel(p: string): string {
    if (!this.root) return p;
    const r = this.path.relative(this.root, p);
    return r.startsWith('..') || this.path.isAbsolute(r) ? p : r.split(this.path.sep).join('/');
  }

  private readonly steps = new WeakMap<ExecuteContext, number>();

  /**
   * One brain call becomes several server calls here. Each gets its own id (`<callId>.<n>`, in a
   * fixed order, so a retry reproduces them): a server that answers a repeated id from a cache
   * must not hand the read's answer to the write.
   */
  private step(ctx: ExecuteContext): ExecuteContext {
    const n = (this.steps.get(ctx) ?? 0) + 1;
    this.steps.set(ctx, n);
    return { ...ctx, callId: `${ctx.callId}.${n}` };
  }

  /** Prefixes server errors with the brain's tool name so the model knows which call failed. */
  private async via(brainName: string, tool: string, args: Record<string, unknown>, ctx: ExecuteContext): Promise<string> {
    try {
      return await this.call(tool, args, this.step(ctx));
    } catch (e) {
      if (e instanceof ToolError) throw new ToolError(`${brainName}: ${e.message}`);
      throw e;
    }
  }

  async run(name: string, input: unknown, ctx: ExecuteContext): Promise<string> {
    switch (name) {
      case 'read': {
        const { file_path: p, view_range } = parseToolInput('read', input);
        checkViewRange(view_range);
        const end = view_range?.[1] ?? -1;
        // `head` saves reading a large file's tail; the start of the range is sliced here.
        const text = await this.via(name, this.readTool, { path: this.abs(p), ...(end !== -1 ? { head: end } : {}) }, ctx);
        return view_range === undefined ? text : lineRange(text, [view_range[0]!, -1]);
      }
      case 'write': {
        const { file_path: p, content } = parseToolInput('write', input);
        const abs = this.abs(p);
        // write_file does not create parent folders; the brain's contract does.
        const dir = this.path.dirname(abs);
        if (this.tools.has('create_directory') && dir !== this.root && dir !== abs) {
          await this.via(name, 'create_directory', { path: dir }, ctx);
        }
        await this.via(name, 'write_file', { path: abs, content }, ctx);
        return `wrote ${Buffer.byteLength(content)} bytes to ${this.rel(abs)}`;
      }
      case 'edit': {
        const { file_path: p, old_string, new_string, replace_all } = parseToolInput('edit', input);
        const abs = this.abs(p);
        // edit_file replaces the first match and falls back to whitespace-insensitive
        // matching; the contract is one exact, unique occurrence (or every one with
        // replace_all), so count first.
        const text = lf(await this.via(name, this.readTool, { path: abs }, ctx));
        const count = countOccurrences(text, lf(old_string), p, replace_all);
        if (count === 1) {
          await this.via(name, 'edit_file', { path: abs, edits: [{ oldText: old_string, newText: new_string }] }, ctx);
        } else {
          // Repeated edit_file edits could match inside text an earlier one inserted: replace
          // here and write the whole file (with LF line ends, as edit_file writes them).
          await this.via(name, 'write_file', { path: abs, content: text.split(lf(old_string)).join(new_string) }, ctx);
        }
        return editedText(this.rel(abs), count);
      }
      case 'glob': {
        const { pattern, path: dir } = parseToolInput('glob', input);
        if (!this.root) throw new ToolError('glob: this hand did not say which folder it serves');
        // The folder to search, confined to the served one (server-filesystem would also allow
        // its other allowed directories; the contract is the workspace).
        const baseRel = dir === undefined ? '' : this.confined('glob', dir);
        // A walk rather than search_files: that one also lists folders, and the contract is
        // files, matched the way every other hand matches globs.
        const plan = globPlan(baseRel, pattern);
        const skip = SKIPPED_DIRS.filter((d) => plan.skip(d));
        const start = plan.start === '' ? this.root : this.path.resolve(this.root, plan.start);
        const hits = (await this.listFiles('glob', start, skip, ctx)).map((f) => this.rel(f)).filter((f) => plan.matches(f));
        return hits.length > 0 ? hits.join('\n') : `no files match ${pattern}`;
      }
      case 'grep':
        return this.grep(parseToolInput('grep', input), ctx);
      default:
        throw new ToolError(`unknown tool ${name}`);
    }
  }

  /** Every file under `base` (absolute paths, sorted), from one directory_tree call. */
  private async listFiles(brainName: string, base: string, skip: readonly string[], ctx: ExecuteContext): Promise<string[]> {
    const tree = JSON.parse(await this.via(brainName, 'directory_tree', { path: base, excludePatterns: skip }, ctx)) as TreeEntry[];
    const files: string[] = [];
    const walk = (entries: TreeEntry[], dir: string) => {
      for (const e of entries) {
        const full = this.path.join(dir, e.name);
        if (e.type === 'directory') walk(e.children ?? [], full);
        else files.push(full);
      }
    };
    walk(tree, base);
    return files.sort();
  }

  /** server-filesystem has no content search: list the files, read them, match here. */
  private async grep({ pattern, path: scope }: ToolInput<'grep'>, ctx: ExecuteContext): Promise<string> {
    const re = grepRegExp(pattern);
    const base = scope ? this.abs(scope) : this.root;
    if (!base) throw new ToolError('grep: this hand did not say which folder it serves; give a path');
    const info = await this.via('grep', 'get_file_info', { path: base }, ctx);
    let files = /^isDirectory: true$/m.test(info) ? await this.listFiles('grep', base, SKIPPED_DIRS, ctx) : [base];
    const truncatedFiles = files.length > GREP_MAX_FILES;
    files = files.slice(0, GREP_MAX_FILES);

    const perFile = new Map<string, string[]>();
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const file = files[next++]!;
        let text: string;
        try {
          text = await this.call(this.readTool, { path: file }, this.step(ctx));
        } catch (e) {
          if (e instanceof ToolError) continue; // unreadable (permissions, vanished): skip it
          throw e;
        }
        if (text.includes('\u0000')) continue; // binary
        const hits: string[] = [];
        text.split('\n').forEach((line, i) => {
          if (re.test(line)) hits.push(`${this.rel(file)}:${i + 1}: ${line}`);
        });
        if (hits.length > 0) perFile.set(file, hits);
      }
    };
    await Promise.all(Array.from({ length: GREP_CONCURRENCY }, worker));

    const out = files.flatMap((f) => perFile.get(f) ?? []);
    const notes: string[] = [];
    if (out.length > GREP_MAX_MATCHES) notes.push(`(showing the first ${GREP_MAX_MATCHES} of ${out.length} matches)`);
    if (truncatedFiles) notes.push(`(searched only the first ${GREP_MAX_FILES} files; give a narrower path)`);
    if (out.length === 0) return [`no matches for ${pattern}`, ...notes].join('\n');
    return [...out.slice(0, GREP_MAX_MATCHES), ...notes].join('\n');
  }
}
