import { ToolError } from '~/lib/hand';
import { dirnamePosix, joinPosix, relativeInside, resolvePosix } from '~/lib/posix-path';
import { formatGlobHits, globPlan, skipUnlessNamed } from '~/lib/glob';
import { grepFiles, grepRegExp } from '~/lib/grep-lines';
import { checkViewRange, editedText, lineRange, replaceText } from '~/lib/text-edits';
import { parseToolInput } from '~/lib/tool-inputs';
import { fsError, type ToolFs } from '~/lib/workspace-tools/tool-fs';
import { TOOL_LIMITS, type ToolLimits } from '~/lib/workspace-tools/tool-limits';

// ignoreBOM: a file's byte-order mark is kept, so an edit writes back what it read.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const byteLength = (s: string) => new TextEncoder().encode(s).byteLength;
/** Symlinks followed by hand before a path is refused as a loop. */
const MAX_HOPS = 40;

/**
 * read/write/edit/glob/grep, once for every hand: paddock-hand on a disk, the browser's engines
 * (WebContainer, the offline worker), the in-memory hand. Each hand brings only a `ToolFs`; the
 * confinement to the workspace, the limits, the results and every error's words are these.
 *
 * Every path is confined to the workspace after resolving symlinks (dangling ones too, which a
 * write would follow). That is a guard against mistakes, not a security boundary: a shell command
 * can do anything its process can; the sandbox is the boundary.
 */
export class WorkspaceTools {
  readonly limits: ToolLimits;

  constructor(
    private readonly fs: ToolFs,
    /** Absolute path of the workspace root in `fs` (symlinks resolved). */
    readonly root: string,
    limits: Partial<ToolLimits> = {},
  ) {
    this.limits = { ...TOOL_LIMITS, ...limits };
  }

  /** Runs one of the five file tools by name; any other name is refused (bash is each hand's own). */
  run(name: string, input: unknown): Promise<string> {
    switch (name) {
      case 'read':
        return this.read(input);
      case 'write':
        return this.write(input);
      case 'edit':
        return this.edit(input);
      case 'glob':
        return this.glob(input);
      case 'grep':
        return this.grep(input);
      default:
        return Promise.reject(new ToolError(`unknown tool ${name}`));
    }
  }

  /** A workspace path (relative, or absolute inside the root) → absolute path; refuses escapes. */
  async resolve(p: string): Promise<{ abs: string; rel: string }> {
    const outside = () => new ToolError(`path ${p} is outside the workspace`);
    if (p.includes('\0')) throw new ToolError(`path ${JSON.stringify(p)} contains a NUL byte`);
    const lexical = resolvePosix(this.root, p);
    if (relativeInside(this.root, lexical) === null) throw outside();
    const abs = this.fs.realpath ? await this.realish(lexical, 0) : lexical;
    const rel = abs === null ? null : relativeInside(this.root, abs);
    if (abs === null || rel === null) throw outside();
    return { abs, rel };
  }

  /** realpath of the nearest existing ancestor + the missing tail; null on a loop or an unfollowable link. */
  private async realish(abs: string, hops: number): Promise<string | null> {
    if (hops > MAX_HOPS) return null;
    const tail: string[] = [];
    let probe = abs;
    while (probe !== '/' && (await this.fs.lstat(probe)) === null) {
      tail.unshift(probe.slice(probe.lastIndexOf('/') + 1));
      probe = dirnamePosix(probe);
    }
    try {
      return tail.reduce(joinPosix, await this.fs.realpath!(probe));
    } catch {
      // `probe` exists but does not resolve: a dangling symlink (followed by hand) or a loop.
      if (!this.fs.readlink || (await this.fs.lstat(probe))?.kind !== 'symlink') return null;
      let target: string;
      let parent: string;
      try {
        target = await this.fs.readlink(probe);
        parent = await this.fs.realpath!(dirnamePosix(probe));
      } catch {
        return null;
      }
      return this.realish(tail.reduce(joinPosix, resolvePosix(parent, target)), hops + 1);
    }
  }

  async read(input: unknown): Promise<string> {
    const { file_path: p, view_range } = parseToolInput('read', input);
    const { abs } = await this.resolve(p);
    checkViewRange(view_range);
    return lineRange(await this.readText('read', p, abs), view_range);
  }

  async write(input: unknown): Promise<string> {
    const { file_path: p, content } = parseToolInput('write', input);
    const { abs, rel } = await this.resolve(p);
    if (rel === '') throw new ToolError(`write: path ${p} names the workspace root, not a file`);
    try {
      if ((await this.fs.stat(abs))?.kind === 'dir') throw new ToolError(`write: ${p} is a directory`);
      await this.fs.writeText(abs, content);
    } catch (e) {
      throw e instanceof ToolError ? e : fsError('write', p, e);
    }
    return `wrote ${byteLength(content)} bytes to ${rel}`;
  }

  async edit(input: unknown): Promise<string> {
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

  async glob(input: unknown): Promise<string> {
    const { pattern, path: dir } = parseToolInput('glob', input);
    const base = dir === undefined ? { abs: this.root, rel: '' } : await this.resolve(dir);
    if (dir !== undefined) {
      const info = await this.fs.stat(base.abs).catch(() => null);
      if (info === null) throw new ToolError(`glob: no such folder: ${dir}`);
      if (info.kind !== 'dir') throw new ToolError(`glob: ${dir} is not a folder`);
    }
    const plan = globPlan(base.rel, pattern);
    const start = plan.start === base.rel ? base : await this.resolve(plan.start);
    const hits: string[] = [];
    for await (const rel of this.walk(start.abs, start.rel, plan.skip)) {
      if (plan.matches(rel)) hits.push(rel);
    }
    return formatGlobHits(hits, pattern, this.limits.globResults);
  }

  async grep(input: unknown): Promise<string> {
    const { pattern, path: p } = parseToolInput('grep', input);
    const re = grepRegExp(pattern);
    const scope = p ? await this.resolve(p) : { abs: this.root, rel: '' };
    let info;
    try {
      info = await this.fs.stat(scope.abs);
    } catch (e) {
      throw fsError('grep', p ?? '.', e);
    }
    if (info === null) throw new ToolError(`grep: no such file: ${p ?? '.'}`);
    const files: string[] = [];
    if (info.kind === 'dir') {
      for await (const rel of this.walk(scope.abs, scope.rel, skipUnlessNamed(p ?? ''))) files.push(rel);
      files.sort();
    } else files.push(scope.rel);
    return grepFiles(files, (rel) => this.readSearchable(rel === '' ? this.root : joinPosix(this.root, rel)), re, pattern, this.limits.grepResults);
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
      return; // vanished or unreadable while walking: nothing to list there
    }
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.kind === 'dir') {
        if (!skip(entry.name)) yield* this.walk(joinPosix(abs, entry.name), childRel, skip);
      } else yield childRel;
    }
  }

  private async readText(tool: string, p: string, abs: string): Promise<string> {
    try {
      const info = await this.fs.stat(abs);
      if (info === null) throw new ToolError(`${tool}: no such file: ${p}`);
      if (info.kind === 'dir') throw new ToolError(`${tool}: ${p} is a directory`);
      if (info.size > this.limits.fileBytes) {
        throw new ToolError(`${tool}: ${p} is ${info.size} bytes, over the ${this.limits.fileBytes}-byte limit; use bash (head, sed -n) to look at parts of it`);
      }
      return utf8.decode(await this.fs.readBytes(abs));
    } catch (e) {
      throw e instanceof ToolError ? e : fsError(tool, p, e);
    }
  }

  /**
   * A file's text for grep, or null when it is binary, huge, unreadable or not a regular file.
   * Symlinks are skipped (lstat), as ripgrep does: one could point outside the workspace.
   */
  private async readSearchable(abs: string): Promise<string | null> {
    try {
      const info = await this.fs.lstat(abs);
      if (info === null || info.kind !== 'file' || info.size > this.limits.fileBytes) return null;
      const bytes = await this.fs.readBytes(abs);
      if (bytes.subarray(0, 8000).includes(0)) return null;
      return utf8.decode(bytes);
    } catch {
      return null;
    }
  }
}
