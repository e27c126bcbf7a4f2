import 'client-only';
import { Bash, InMemoryFs } from 'just-bash/browser';
import { ToolError } from '~/lib/hand';
import { createNodeCommand, loadQuickJS } from '~/lib/browser/engine/offline/node/node-command';
import { ShellMounts } from '~/lib/browser/engine/offline/shell-mounts';
import { loadEntries, saveEntries, type StoredEntry } from '~/lib/browser/engine/offline/persist';
import { relativeInside } from '~/lib/posix-path';
import { bashCall, formatBashResult, type BashEnd } from '~/lib/workspace-tools/bash-rules';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import type { EntryKind, ToolFs } from '~/lib/workspace-tools/tool-fs';

/**
 * The offline engine's shell, inside the worker: just-bash with an in-memory filesystem, the
 * QuickJS `node` command, the file tools on the same filesystem, and persistence of the
 * workspace to IndexedDB after every call that changed it.
 */

export const WORKSPACE = '/workspace';

/** InMemoryFs that remembers which paths were changed, so a save writes only those. */
class TrackedFs extends InMemoryFs {
  touched = new Set<string>();

  private note(...paths: string[]): void {
    // Called from InMemoryFs's constructor too, before this class's fields exist.
    for (const p of paths) this.touched?.add(this.resolvePath('/', p));
  }
  override writeFile(...a: Parameters<InMemoryFs['writeFile']>) {
    this.note(a[0]);
    return super.writeFile(...a);
  }
  override writeFileSync(...a: Parameters<InMemoryFs['writeFileSync']>) {
    this.note(a[0]);
    super.writeFileSync(...a);
  }
  override appendFile(...a: Parameters<InMemoryFs['appendFile']>) {
    this.note(a[0]);
    return super.appendFile(...a);
  }
  override mkdir(...a: Parameters<InMemoryFs['mkdir']>) {
    this.note(a[0]);
    return super.mkdir(...a);
  }
  override mkdirSync(...a: Parameters<InMemoryFs['mkdirSync']>) {
    this.note(a[0]);
    super.mkdirSync(...a);
  }
  override rm(...a: Parameters<InMemoryFs['rm']>) {
    this.note(a[0]);
    return super.rm(...a);
  }
  override cp(...a: Parameters<InMemoryFs['cp']>) {
    this.note(a[1]);
    return super.cp(...a);
  }
  override mv(...a: Parameters<InMemoryFs['mv']>) {
    this.note(a[0], a[1]);
    return super.mv(...a);
  }
  override chmod(...a: Parameters<InMemoryFs['chmod']>) {
    this.note(a[0]);
    return super.chmod(...a);
  }
  override symlink(...a: Parameters<InMemoryFs['symlink']>) {
    this.note(a[1]);
    return super.symlink(...a);
  }
  override link(...a: Parameters<InMemoryFs['link']>) {
    this.note(a[1]);
    return super.link(...a);
  }
  override utimes(...a: Parameters<InMemoryFs['utimes']>) {
    this.note(a[0]);
    return super.utimes(...a);
  }
}

export interface ShellLimits {
  nodeTimeLimitMs: number;
  nodeMemoryLimitBytes: number;
}

export class OfflineShell {
  private readonly fs = new TrackedFs();
  private readonly bash: Bash;
  readonly tools: WorkspaceTools;
  /** The session's mounts under /mnt, which bash reaches (the file tools stay in the workspace). */
  readonly mounts: ShellMounts;
  /** Deadline of the bash call running now: `node` stops there too. */
  private outerDeadline: number | undefined;

  constructor(
    private readonly sessionId: string,
    limits: ShellLimits,
  ) {
    for (const dir of [WORKSPACE, '/tmp', '/home/user']) this.fs.mkdirSync(dir, { recursive: true });
    this.bash = new Bash({
      fs: this.fs,
      cwd: WORKSPACE,
      env: { HOME: '/home/user', USER: 'user', TMPDIR: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb' },
      // The bash tool's own timeout (up to 10 min) is the limit that matters.
      executionLimits: { maxExecutionTimeMs: 600_000 },
      customCommands: [
        createNodeCommand(() => ({
          timeLimitMs: limits.nodeTimeLimitMs,
          memoryLimitBytes: limits.nodeMemoryLimitBytes,
          outerDeadline: this.outerDeadline,
        })),
      ],
    });
    this.tools = new WorkspaceTools(this.toolFs(), WORKSPACE);
    this.mounts = new ShellMounts(this.fs);
  }

  /** Loads the workspace saved for this session; returns the number of files restored. */
  async restore(): Promise<number> {
    const entries = await loadEntries(this.sessionId);
    let files = 0;
    for (const e of entries) {
      if (e.kind === 'dir') this.fs.mkdirSync(e.path, { recursive: true });
      else if (e.kind === 'file' && e.data) {
        this.fs.writeFileSync(e.path, e.data, undefined, { mode: e.mode, mtime: new Date(e.mtime) });
        files++;
      } else if (e.kind === 'symlink' && e.target !== undefined) await this.fs.symlink(e.target, e.path).catch(() => undefined);
    }
    this.fs.touched.clear();
    return files;
  }

  /** Starts loading QuickJS in the background so the first `node` does not wait for it. */
  warmUp(): void {
    void loadQuickJS().catch(() => undefined);
  }

  async runBash(input: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const { command, timeout } = bashCall(input);
    if (signal.aborted) throw new ToolError('bash: cancelled before it started');
    const stop = new AbortController();
    let end: BashEnd | null = null;
    const timer = setTimeout(() => {
      end = { kind: 'timeout', timeoutMs: timeout };
      stop.abort();
    }, timeout);
    const onAbort = () => {
      end ??= { kind: 'cancelled' };
      stop.abort();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    this.outerDeadline = Date.now() + timeout;
    try {
      // rawScript: keep leading whitespace (heredocs, Python, YAML), as real bash does.
      const r = await this.bash.exec(command, { cwd: WORKSPACE, signal: stop.signal, rawScript: true });
      const stdout = r.stdoutKind === 'bytes' || r.stdoutEncoding === 'binary' ? latin1ToText(r.stdout) : r.stdout;
      // just-bash reports its own abort; the trailer says how the command was stopped.
      const stderr = end ? r.stderr.replace(/bash: execution aborted\n?$/, '') : r.stderr;
      return formatBashResult(stdout + stderr, end ?? { kind: 'exit', code: r.exitCode });
    } catch (e) {
      if (end) return formatBashResult('', end);
      throw new ToolError(`bash: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      this.outerDeadline = undefined;
    }
  }

  /** Saves what changed in the workspace since the last save. */
  async persist(): Promise<void> {
    const paths = [...this.fs.touched].filter((p) => relativeInside(WORKSPACE, p) !== null);
    this.fs.touched.clear();
    if (paths.length === 0) return;
    const puts: StoredEntry[] = [];
    const removed: string[] = [];
    const seen = new Set<string>();
    const add = async (p: string): Promise<void> => {
      if (seen.has(p)) return;
      seen.add(p);
      const st = await this.fs.lstat(p).catch(() => null);
      if (st === null) {
        removed.push(p);
        return;
      }
      const base = { session: this.sessionId, path: p, mode: st.mode, mtime: st.mtime.getTime() };
      if (st.isSymbolicLink) puts.push({ ...base, kind: 'symlink', target: await this.fs.readlink(p) });
      else if (st.isFile) puts.push({ ...base, kind: 'file', data: await this.fs.readFileBuffer(p) });
      else if (st.isDirectory) {
        puts.push({ ...base, kind: 'dir' });
        // A folder that was copied or moved in arrives as one path: save what is inside too.
        for (const name of await this.fs.readdir(p)) await add(`${p}/${name}`);
      }
    };
    for (const p of paths.sort()) await add(p);
    await saveEntries(this.sessionId, puts, removed);
  }

  private toolFs(): ToolFs {
    const fs = this.fs;
    const kindOf = (st: { isFile: boolean; isDirectory: boolean; isSymbolicLink: boolean }): EntryKind =>
      st.isSymbolicLink ? 'symlink' : st.isDirectory ? 'dir' : st.isFile ? 'file' : 'other';
    return {
      lstat: async (p) => {
        const st = await fs.lstat(p).catch(() => null);
        return st && { kind: kindOf(st), size: st.size };
      },
      stat: async (p) => {
        const st = await fs.stat(p).catch(() => null);
        return st && { kind: kindOf(st), size: st.size };
      },
      readBytes: (p) => fs.readFileBuffer(p),
      writeText: async (p, content) => {
        await fs.mkdir(p.slice(0, p.lastIndexOf('/')) || '/', { recursive: true });
        await fs.writeFile(p, content);
      },
      list: async (p) => (await fs.readdirWithFileTypes(p)).map((d) => ({ name: d.name, kind: kindOf(d) })),
      realpath: (p) => fs.realpath(p),
    };
  }
}

function latin1ToText(s: string): string {
  const u = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i) & 255;
  return new TextDecoder().decode(u);
}
