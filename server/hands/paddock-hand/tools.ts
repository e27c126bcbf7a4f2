import { spawn } from 'node:child_process';
import { type Dirent, realpathSync } from 'node:fs';
import { lstat, mkdir, readFile, readdir, readlink, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '~/lib/hand';
import { formatGlobHits, globPlan, skipUnlessNamed } from '~/lib/glob';
import { checkViewRange, editedText, lineRange, replaceText } from '~/lib/text-edits';
import { parseToolInput, type ToolInput } from '~/lib/tool-inputs';
import { grepFiles, grepRegExp } from '~/lib/grep-lines';
import { type EntryShape, isSandboxMask, SANDBOX_MASKED_NAMES } from '~/lib/sandbox-masks';
import { PASS_ENV_ENV } from '~/server/hands/sandbox/hand-secret';

/**
 * The six hand tools on a real workspace folder. Every path is confined to the workspace (after
 * resolving symlinks); `bash` runs in its own process group with a clean environment so it can
 * neither outlive its timeout nor read the server's secrets. Failures throw `ToolError`, which
 * the MCP layer turns into an `isError` result for the model.
 *
 * The confinement here is a guard against mistakes, not a security boundary: a shell command can
 * do anything the process can. The sandbox (bubblewrap) or the container is the boundary.
 */

export interface HandLimits {
  /** Characters of bash output kept (head and tail); the middle is dropped with a notice. */
  outputChars: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  globResults: number;
  grepResults: number;
  /** Larger files are refused by read/edit and skipped by grep. */
  fileBytes: number;
  /** Per bash command: address-space limit (ulimit -v), 0 = none. */
  memoryMb: number;
  /** Per bash command: CPU-time limit (ulimit -t), 0 = none. */
  cpuSeconds: number;
}

export const DEFAULT_LIMITS: HandLimits = {
  outputChars: 30_000,
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  globResults: 1000,
  grepResults: 500,
  fileBytes: 10 * 1024 * 1024,
  memoryMb: 0,
  cpuSeconds: 0,
};

export type BashInput = ToolInput<'bash'>;
export type ReadInput = ToolInput<'read'>;
export type WriteInput = ToolInput<'write'>;
export type EditInput = ToolInput<'edit'>;
export type GlobInput = ToolInput<'glob'>;
export type GrepInput = ToolInput<'grep'>;

/** After bash exits, how long to keep reading output still held open by background children. */
const DRAIN_MS = 100;

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function isCode(e: unknown, ...codes: string[]): boolean {
  return typeof e === 'object' && e !== null && codes.includes((e as NodeJS.ErrnoException).code ?? '');
}

/**
 * The sandbox's proxy variables, and the trust-store variables its TLS-terminating proxy sets when
 * the hand has secrets (sandbox-runtime's CA_TRUST_VARS: each tool's own CA bundle setting).
 */
const PASSED_ENV = [
  'TMPDIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'GIT_SSL_CAINFO',
  'AWS_CA_BUNDLE',
  'CARGO_HTTP_CAINFO',
  'DENO_CERT',
  'CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE',
  'NIX_SSL_CERT_FILE',
] as const;

function passedNames(): string[] {
  const extra = (process.env[PASS_ENV_ENV] ?? '').split(',').filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  return [...PASSED_ENV, ...extra];
}

export class Workspace {
  /** The workspace folder with symlinks resolved: the boundary every path is checked against. */
  readonly root: string;
  readonly limits: HandLimits;
  /** Process groups of bash calls, killed on dispose so nothing outlives the hand. */
  private readonly groups = new Set<number>();

  /** `dir` must exist. */
  constructor(dir: string, limits: Partial<HandLimits> = {}) {
    this.root = realpathSync(path.resolve(dir));
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /**
   * Resolves a workspace path (relative, or absolute inside the workspace) to a real absolute
   * path, refusing anything that lands outside: `..`, absolute paths elsewhere, and symlinks
   * (also dangling ones, which a write would follow) whose target is outside.
   */
  async resolve(p: string): Promise<{ abs: string; rel: string }> {
    const outside = () => new ToolError(`path ${p} is outside the workspace`);
    if (p.includes('\0')) throw new ToolError(`path ${JSON.stringify(p)} contains a NUL byte`);
    const lexical = path.resolve(this.root, p);
    if (!inside(this.root, lexical)) throw outside();
    const abs = await this.realish(lexical, 0);
    if (abs === null || !inside(this.root, abs)) throw outside();
    return { abs, rel: path.relative(this.root, abs).split(path.sep).join('/') };
  }

  /** realpath of the nearest existing ancestor + the missing tail; null on a symlink loop. */
  private async realish(p: string, hops: number): Promise<string | null> {
    if (hops > 40) return null;
    const tail: string[] = [];
    let probe = p;
    for (;;) {
      try {
        await lstat(probe);
        break;
      } catch (e) {
        if (!isCode(e, 'ENOENT', 'ENOTDIR')) throw e;
        tail.unshift(path.basename(probe));
        probe = path.dirname(probe);
      }
    }
    try {
      return path.join(await realpath(probe), ...tail);
    } catch (e) {
      if (!isCode(e, 'ENOENT', 'ELOOP')) throw e;
      if (isCode(e, 'ELOOP')) return null;
      // `probe` is a dangling symlink: follow its target by hand.
      const parent = await realpath(path.dirname(probe));
      return this.realish(path.join(path.resolve(parent, await readlink(probe)), ...tail), hops + 1);
    }
  }

  // ── file tools ────────────────────────────────────────────────────────────

  async read({ file_path: p, view_range }: ReadInput): Promise<string> {
    const { abs } = await this.resolve(p);
    checkViewRange(view_range);
    return lineRange(await this.readText('read', p, abs), view_range);
  }

  async write({ file_path: p, content }: WriteInput): Promise<string> {
    const { abs, rel } = await this.resolve(p);
    if (rel === '') throw new ToolError(`write: path ${p} names the workspace root, not a file`);
    try {
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, content);
    } catch (e) {
      throw fsError('write', p, e);
    }
    return `wrote ${Buffer.byteLength(content)} bytes to ${rel}`;
  }

  async edit({ file_path: p, old_string, new_string, replace_all }: EditInput): Promise<string> {
    const { abs, rel } = await this.resolve(p);
    if (old_string === '') throw new ToolError('edit: old_string is empty');
    const edited = replaceText(await this.readText('edit', p, abs), old_string, new_string, p, replace_all);
    try {
      await writeFile(abs, edited.text);
    } catch (e) {
      throw fsError('edit', p, e);
    }
    return editedText(rel, edited.count);
  }

  async glob({ pattern, path: dir }: GlobInput): Promise<string> {
    const base = dir === undefined ? { abs: this.root, rel: '' } : await this.resolve(dir);
    if (dir !== undefined) {
      const info = await stat(base.abs).catch(() => null);
      if (info === null) throw new ToolError(`glob: no such folder: ${dir}`);
      if (!info.isDirectory()) throw new ToolError(`glob: ${dir} is not a folder`);
    }
    const plan = globPlan(base.rel, pattern);
    const start = plan.start === base.rel ? base : await this.resolve(plan.start);
    const hits: string[] = [];
    for await (const rel of this.walk(start.abs, start.rel, plan.skip)) {
      if (plan.matches(rel)) hits.push(rel);
    }
    return formatGlobHits(hits, pattern, this.limits.globResults);
  }

  async grep({ pattern, path: p }: GrepInput): Promise<string> {
    const re = grepRegExp(pattern);
    const scope = p ? await this.resolve(p) : { abs: this.root, rel: '' };
    let info;
    try {
      info = await stat(scope.abs);
    } catch (e) {
      throw fsError('grep', p ?? '.', e);
    }
    const files: string[] = [];
    if (info.isDirectory()) {
      for await (const rel of this.walk(scope.abs, scope.rel, skipUnlessNamed(p ?? ''))) files.push(rel);
      files.sort();
    } else files.push(scope.rel);

    return grepFiles(files, (rel) => this.readSearchable(path.join(this.root, rel)), re, pattern, this.limits.grepResults);
  }

  /** Files (and symlinks, not followed) below `abs`, as workspace-relative `/` paths. */
  private async *walk(abs: string, rel: string, skip: (name: string) => boolean): AsyncGenerator<string> {
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (e) {
      if (isCode(e, 'ENOENT', 'ENOTDIR', 'EACCES')) return;
      throw e;
    }
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      // Hidden here, in the hand, rather than only in the IDE: the agent's glob and grep then skip
      // the sandbox's placeholders too (they are not its files, and writing them fails anyway).
      if (rel === '' && (await this.isMask(abs, entry))) continue;
      if (entry.isDirectory()) {
        if (!skip(entry.name)) yield* this.walk(path.join(abs, entry.name), childRel, skip);
      } else yield childRel;
    }
  }

  /** Whether a top-level entry is one of the sandbox runtime's empty placeholders (`lib/sandbox-masks.ts`). */
  private async isMask(dir: string, entry: Dirent): Promise<boolean> {
    if (!SANDBOX_MASKED_NAMES.has(entry.name)) return false;
    const abs = path.join(dir, entry.name);
    try {
      const shape: EntryShape = entry.isDirectory() ? { kind: 'directory', entries: (await readdir(abs)).length } : { kind: 'file', size: (await lstat(abs)).size };
      return isSandboxMask(entry.name, shape);
    } catch {
      return false;
    }
  }

  private async readText(tool: string, p: string, abs: string): Promise<string> {
    try {
      const info = await stat(abs);
      if (info.isDirectory()) throw new ToolError(`${tool}: ${p} is a directory`);
      if (info.size > this.limits.fileBytes) {
        throw new ToolError(
          `${tool}: ${p} is ${info.size} bytes, over the ${this.limits.fileBytes}-byte limit; use bash (head, sed -n) to look at parts of it`,
        );
      }
      return await readFile(abs, 'utf8');
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
      const info = await lstat(abs);
      if (!info.isFile() || info.size > this.limits.fileBytes) return null;
      const buf = await readFile(abs);
      if (buf.subarray(0, 8000).includes(0)) return null;
      return buf.toString('utf8');
    } catch {
      return null;
    }
  }

  // ── bash ──────────────────────────────────────────────────────────────────

  /**
   * Every command runs in a fresh `bash -c`: no shell state (variables, cd) carries over, so the
   * toolset's `restart` (a fresh shell) is accepted and needs nothing done.
   */
  async bash({ command, timeout_ms }: BashInput, signal?: AbortSignal): Promise<string> {
    const timeout = timeout_ms ?? this.limits.defaultTimeoutMs;
    if (!Number.isInteger(timeout) || timeout <= 0) throw new ToolError(`bash: timeout_ms must be a positive integer`);
    if (timeout > this.limits.maxTimeoutMs) {
      throw new ToolError(`bash: timeout_ms ${timeout} is over the maximum of ${this.limits.maxTimeoutMs}`);
    }
    if (signal?.aborted) throw new ToolError('bash: cancelled before it started');
    for (const g of this.groups) if (!groupAlive(g)) this.groups.delete(g);

    // Resource limits apply to the command and everything it starts (inherited by children).
    const ulimits = [
      this.limits.memoryMb > 0 ? `ulimit -S -v ${this.limits.memoryMb * 1024}` : '',
      this.limits.cpuSeconds > 0 ? `ulimit -S -t ${this.limits.cpuSeconds}` : '',
    ].filter(Boolean);
    const script = ulimits.length > 0 ? `${ulimits.join('; ')}\n${command}` : command;
    const child = spawn('/bin/bash', ['-c', script], {
      cwd: this.root,
      detached: true, // its own process group, so a timeout kills every descendant
      stdio: ['ignore', 'pipe', 'pipe'],
      env: this.cleanEnv(),
    });
    const pgid = child.pid;
    if (pgid !== undefined) this.groups.add(pgid);
    const killGroup = () => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    };

    const output = new CappedOutput(this.limits.outputChars);
    const stdout = new StringDecoder('utf8');
    const stderr = new StringDecoder('utf8');
    child.stdout.on('data', (b: Buffer) => output.push(stdout.write(b)));
    child.stderr.on('data', (b: Buffer) => output.push(stderr.write(b)));

    // Why the group was killed, if we killed it (an object: closures write it, TS sees that).
    const end: { reason?: 'timeout' | 'cancelled' } = {};
    const timer = setTimeout(() => {
      end.reason = 'timeout';
      killGroup();
    }, timeout);
    const onAbort = () => {
      end.reason ??= 'cancelled';
      killGroup();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // 'close' = exited and both pipes closed; 'exit' alone may come before the last output.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

    try {
      const exit = await new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code, sig) => resolve({ code, sig }));
      });
      // Background children (`server &`) may hold the pipes open: take what arrives shortly
      // after the exit, then stop listening rather than wait for them.
      let drain: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((r) => (drain = setTimeout(r, DRAIN_MS)))]);
      clearTimeout(drain);
      child.stdout.destroy();
      child.stderr.destroy();
      output.push(stdout.end() + stderr.end());

      const text = output.text();
      const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
      if (end.reason === 'timeout') return `${body}killed by SIGKILL after timeout of ${timeout} ms`;
      if (end.reason === 'cancelled') return `${body}cancelled: killed by SIGKILL`;
      if (exit.sig) return `${body}killed by ${exit.sig}`;
      return `${body}exit code: ${exit.code ?? -1}`;
    } catch (e) {
      throw new ToolError(`bash: could not start /bin/bash: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (pgid !== undefined && !groupAlive(pgid)) this.groups.delete(pgid);
    }
  }

  /**
   * Never the server's environment: it may hold tokens. Only an allowlist passes: HOME and TMPDIR
   * (inside the sandbox they point at the hand's private home and tmp; the workspace itself cannot
   * be HOME there, the sandbox masks its dotfiles) and the sandbox's proxy variables, without which
   * allowlisted hosts are unreachable. (The cast: Next's global types make NODE_ENV a required key
   * of ProcessEnv; the child gets none.)
   */
  private cleanEnv(): NodeJS.ProcessEnv {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: process.env.HOME ?? this.root,
      PWD: this.root,
      LANG: 'C.UTF-8',
      TERM: 'dumb',
    };
    for (const name of passedNames()) {
      const v = process.env[name];
      if (v !== undefined) env[name] = v;
    }
    return env as NodeJS.ProcessEnv;
  }

  /** Kills every process group a bash call started that is still alive (background jobs). */
  dispose(): void {
    for (const pgid of this.groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.groups.clear();
  }
}

/** Keeps the head and the tail of a stream of text; counts the bytes dropped in between. */
class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = Math.floor(cap / 2);
  }

  push(s: string): void {
    if (this.head.length < this.headCap) {
      const take = s.slice(0, this.headCap - this.head.length);
      this.head += take;
      s = s.slice(take.length);
    }
    if (s === '') return;
    this.tail += s;
    if (this.tail.length > this.tailCap) {
      const cut = this.tail.length - this.tailCap;
      this.dropped += Buffer.byteLength(this.tail.slice(0, cut));
      this.tail = this.tail.slice(cut);
    }
  }

  text(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[output truncated: ${this.dropped} more bytes]\n${this.tail}`;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function fsError(tool: string, p: string, e: unknown): ToolError {
  if (isCode(e, 'ENOENT')) return new ToolError(`${tool}: no such file: ${p}`);
  if (isCode(e, 'EISDIR')) return new ToolError(`${tool}: ${p} is a directory`);
  if (isCode(e, 'ENOTDIR')) return new ToolError(`${tool}: a parent of ${p} is not a directory`);
  if (isCode(e, 'EACCES', 'EPERM')) return new ToolError(`${tool}: permission denied: ${p}`);
  return new ToolError(`${tool}: ${p}: ${(e as Error).message}`);
}

/**
 * Runs one tool by name. The input is parsed here (the toolset's names, Paddock's old ones as
 * aliases), so a caller may pass a call as the model or an old log wrote it.
 */
export async function runTool(ws: Workspace, name: string, input: unknown, signal?: AbortSignal): Promise<string> {
  switch (name) {
    case 'bash':
      return ws.bash(parseToolInput('bash', input), signal);
    case 'read':
      return ws.read(parseToolInput('read', input));
    case 'write':
      return ws.write(parseToolInput('write', input));
    case 'edit':
      return ws.edit(parseToolInput('edit', input));
    case 'glob':
      return ws.glob(parseToolInput('glob', input));
    case 'grep':
      return ws.grep(parseToolInput('grep', input));
    default:
      throw new ToolError(`unknown tool ${name}`);
  }
}
