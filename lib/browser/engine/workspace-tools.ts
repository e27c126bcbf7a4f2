import 'client-only';
import { ToolError } from '~/lib/hand';
import { joinPosix, relativeInside, resolvePosix } from '~/lib/browser/engine/posix-path';
import { formatGlobHits, globPlan, skipUnlessNamed } from '~/lib/glob';
import { checkViewRange, editedText, lineRange, replaceText } from '~/lib/text-edits';
import { parseToolInput } from '~/lib/tool-inputs';
import { grepFiles, grepRegExp } from '~/lib/grep-lines';

/**
 * read/write/edit/glob/grep for the browser engines, over a small async filesystem interface
 * (the offline engine's in-memory fs inside its worker, the WebContainer's `fs`). Results and
 * error wording follow paddock-hand (server/hands/paddock-hand/tools.ts) so the model sees the
 * same tool behaviour whichever hand runs it.
 */

export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface ToolFs {
  /** The entry itself (a symlink is not followed); null when absent. */
  lstat(abs: string): Promise<{ kind: EntryKind; size: number } | null>;
  /** After following symlinks; null when absent. */
  stat(abs: string): Promise<{ kind: EntryKind; size: number } | null>;
  readBytes(abs: string): Promise<Uint8Array>;
  /** Creates missing parent folders. */
  writeText(abs: string, content: string): Promise<void>;
  list(abs: string): Promise<Array<{ name: string; kind: EntryKind }>>;
  /** The path with every symlink resolved (it must exist); absent on a filesystem without symlinks. */
  realpath?(abs: string): Promise<string>;
}

export const TOOL_LIMITS = {
  /** Characters of bash output kept (head and tail). */
  outputChars: 30_000,
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  globResults: 1000,
  grepResults: 500,
  fileBytes: 10 * 1024 * 1024,
} as const;


const utf8 = new TextDecoder();

export class WorkspaceTools {
  constructor(
    private readonly fs: ToolFs,
    /** Absolute path of the workspace root in `fs`. */
    readonly root: string,
  ) {}

  /** A workspace path (relative, or absolute inside the root) → absolute path; refuses escapes. */
  async resolve(p: string): Promise<{ abs: string; rel: string }> {
    const outside = () => new ToolError(`path ${p} is outside the workspace`);
    if (p.includes('\0')) throw new ToolError(`path ${JSON.stringify(p)} contains a NUL byte`);
    const lexical = resolvePosix(this.root, p);
    if (relativeInside(this.root, lexical) === null) throw outside();
    const abs = this.fs.realpath ? await this.realish(lexical) : lexical;
    const rel = abs === null ? null : relativeInside(this.root, abs);
    if (abs === null || rel === null) throw outside();
    return { abs, rel };
  }

  /** realpath of the nearest existing ancestor + the missing tail; null for a dangling symlink. */
  private async realish(abs: string): Promise<string | null> {
    const tail: string[] = [];
    let probe = abs;
    while (probe !== '/' && (await this.fs.lstat(probe)) === null) {
      tail.unshift(probe.slice(probe.lastIndexOf('/') + 1));
      probe = probe.slice(0, probe.lastIndexOf('/')) || '/';
    }
    try {
      const real = await this.fs.realpath!(probe);
      return tail.reduce(joinPosix, real);
    } catch {
      return null;
    }
  }

  async read(input: Record<string, unknown>): Promise<string> {
    const { file_path: p, view_range } = parseToolInput('read', input);
    const { abs } = await this.resolve(p);
    checkViewRange(view_range);
    return lineRange(await this.readText('read', p, abs), view_range);
  }

  async write(input: Record<string, unknown>): Promise<string> {
    const { file_path: p, content } = parseToolInput('write', input);
    const { abs, rel } = await this.resolve(p);
    if (rel === '') throw new ToolError(`write: path ${p} names the workspace root, not a file`);
    if ((await this.fs.stat(abs))?.kind === 'dir') throw new ToolError(`write: ${p} is a directory`);
    try {
      await this.fs.writeText(abs, content);
    } catch (e) {
      throw fsError('write', p, e);
    }
    return `wrote ${new TextEncoder().encode(content).byteLength} bytes to ${rel}`;
  }

  async edit(input: Record<string, unknown>): Promise<string> {
    const { file_path: p, old_string, new_string, replace_all } = parseToolInput('edit', input);
    const { abs, rel } = await this.resolve(p);
    const edited = replaceText(await this.readText('edit', p, abs), old_string, new_string, p, replace_all);
    try {
      await this.fs.writeText(abs, edited.text);
    } catch (e) {
      throw fsError('edit', p, e);
    }
    return editedText(rel, edited.count);
  }

  async glob(input: Record<string, unknown>): Promise<string> {
    const { pattern, path: dir } = parseToolInput('glob', input);
    const base = dir === undefined ? { abs: this.root, rel: '' } : await this.resolve(dir);
    if (dir !== undefined) {
      const info = await this.fs.stat(base.abs);
      if (info === null) throw new ToolError(`glob: no such folder: ${dir}`);
      if (info.kind !== 'dir') throw new ToolError(`glob: ${dir} is not a folder`);
    }
    const plan = globPlan(base.rel, pattern);
    const start = plan.start === base.rel ? base : await this.resolve(plan.start);
    const hits: string[] = [];
    for await (const rel of this.walk(start.abs, start.rel, plan.skip)) {
      if (plan.matches(rel)) hits.push(rel);
    }
    return formatGlobHits(hits, pattern, TOOL_LIMITS.globResults);
  }

  async grep(input: Record<string, unknown>): Promise<string> {
    const { pattern, path: p } = parseToolInput('grep', input);
    const re = grepRegExp(pattern);
    const scope = p ? await this.resolve(p) : { abs: this.root, rel: '' };
    const info = await this.fs.stat(scope.abs);
    if (info === null) throw new ToolError(`grep: no such file: ${p ?? '.'}`);
    const files: string[] = [];
    if (info.kind === 'dir') {
      for await (const rel of this.walk(scope.abs, scope.rel, skipUnlessNamed(p ?? ''))) files.push(rel);
      files.sort();
    } else files.push(scope.rel);

    return grepFiles(files, (rel) => this.readSearchable(rel === '' ? this.root : joinPosix(this.root, rel)), re, pattern, TOOL_LIMITS.grepResults);
  }

  /** Every file in the workspace (relative, sorted), without node_modules and .git (the file tree). */
  async listFiles(): Promise<string[]> {
    const files: string[] = [];
    for await (const rel of this.walk(this.root, '', skipUnlessNamed(''))) files.push(rel);
    return files.sort();
  }

  /** A workspace file's text (for the editor): the same checks as `read`. */
  async readFile(p: string): Promise<string> {
    const { abs } = await this.resolve(p);
    return this.readText('read', p, abs);
  }

  /** Files (and symlinks, not followed) below `abs`, as workspace-relative `/` paths. */
  private async *walk(abs: string, rel: string, skip: (name: string) => boolean): AsyncGenerator<string> {
    let entries;
    try {
      entries = await this.fs.list(abs);
    } catch {
      return;
    }
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.kind === 'dir') {
        if (!skip(entry.name)) yield* this.walk(joinPosix(abs, entry.name), childRel, skip);
      } else yield childRel;
    }
  }

  private async readText(tool: string, p: string, abs: string): Promise<string> {
    const info = await this.fs.stat(abs);
    if (info === null) throw new ToolError(`${tool}: no such file: ${p}`);
    if (info.kind === 'dir') throw new ToolError(`${tool}: ${p} is a directory`);
    if (info.size > TOOL_LIMITS.fileBytes) {
      throw new ToolError(
        `${tool}: ${p} is ${info.size} bytes, over the ${TOOL_LIMITS.fileBytes}-byte limit; use bash (head, sed -n) to look at parts of it`,
      );
    }
    try {
      return utf8.decode(await this.fs.readBytes(abs));
    } catch (e) {
      throw fsError(tool, p, e);
    }
  }

  /** A file's text for grep, or null when it is binary, huge, a symlink or unreadable. */
  private async readSearchable(abs: string): Promise<string | null> {
    try {
      const info = await this.fs.lstat(abs);
      if (info === null || info.kind !== 'file' || info.size > TOOL_LIMITS.fileBytes) return null;
      const bytes = await this.fs.readBytes(abs);
      if (bytes.subarray(0, 8000).includes(0)) return null;
      return utf8.decode(bytes);
    } catch {
      return null;
    }
  }
}

// ── bash result conventions (as paddock-hand) ──────────────────────────────

/**
 * A bash call's command and effective timeout, with paddock-hand's messages. The toolset's
 * `restart` is accepted and changes nothing: every command already runs in a fresh shell.
 */
export function bashCall(input: Record<string, unknown>): { command: string; timeout: number } {
  const { command, timeout_ms } = parseToolInput('bash', input);
  const t = timeout_ms ?? TOOL_LIMITS.defaultTimeoutMs;
  if (t > TOOL_LIMITS.maxTimeoutMs) throw new ToolError(`bash: timeout_ms ${t} is over the maximum of ${TOOL_LIMITS.maxTimeoutMs}`);
  return { command, timeout: t };
}

export type BashEnd = { kind: 'exit'; code: number } | { kind: 'timeout'; timeoutMs: number } | { kind: 'cancelled' };

/** `output` + the trailer the model reads: `exit code: N`, or how the command was stopped. */
export function formatBashResult(output: string, end: BashEnd): string {
  const capped = capOutput(output, TOOL_LIMITS.outputChars);
  const body = capped === '' || capped.endsWith('\n') ? capped : `${capped}\n`;
  switch (end.kind) {
    case 'timeout':
      return `${body}killed by SIGKILL after timeout of ${end.timeoutMs} ms`;
    case 'cancelled':
      return `${body}cancelled: killed by SIGKILL`;
    case 'exit':
      return `${body}exit code: ${end.code}`;
  }
}

/** Keeps the head and the tail of long output, with a notice of the bytes dropped between. */
export function capOutput(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const headCap = Math.ceil(cap / 2);
  const tailCap = Math.floor(cap / 2);
  const dropped = new TextEncoder().encode(text.slice(headCap, text.length - tailCap)).byteLength;
  return `${text.slice(0, headCap)}\n[output truncated: ${dropped} more bytes]\n${text.slice(text.length - tailCap)}`;
}

// ── helpers ────────────────────────────────────────────────────────────────

/** The errno code of an error from a virtual fs ("ENOENT: no such file…" or `.code`). */
export function errnoOf(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const message = (e as { message?: unknown }).message;
  const m = /^(E[A-Z]+)\b/.exec(typeof message === 'string' ? message : '');
  return m?.[1];
}

function fsError(tool: string, p: string, e: unknown): ToolError {
  switch (errnoOf(e)) {
    case 'ENOENT':
      return new ToolError(`${tool}: no such file: ${p}`);
    case 'EISDIR':
      return new ToolError(`${tool}: ${p} is a directory`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new ToolError(`${tool}: a parent of ${p} is not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`${tool}: permission denied: ${p}`);
    default:
      return new ToolError(`${tool}: ${p}: ${(e as Error).message}`);
  }
}
