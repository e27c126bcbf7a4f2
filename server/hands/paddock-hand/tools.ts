import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '~/lib/hand';
import { parseToolInput, type ToolInput } from '~/lib/tool-inputs';
import { bashCall, bashTrailer, CappedOutput, SANDBOX_PASSED_ENV } from '~/lib/workspace-tools/bash-rules';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import { TOOL_LIMITS, type ToolLimits } from '~/lib/workspace-tools/tool-limits';
import { nodeToolFs } from '~/server/hands/paddock-hand/node-tool-fs';
import { PASS_ENV_ENV } from '~/server/hands/sandbox/hand-secret';

/**
 * The six hand tools on a real workspace folder. The file tools are the ones every hand shares
 * (`lib/workspace-tools/file-tools.ts`) over this disk; `bash` runs in its own process group with
 * a clean environment so it can neither outlive its timeout nor read the server's secrets.
 * Failures throw `ToolError`, which the MCP layer turns into an `isError` result for the model.
 *
 * The confinement is a guard against mistakes, not a security boundary: a shell command can do
 * anything the process can. The sandbox (bubblewrap) or the container is the boundary.
 */

export type HandLimits = ToolLimits;
export const DEFAULT_LIMITS: HandLimits = TOOL_LIMITS;

export type BashInput = ToolInput<'bash'>;
export type ReadInput = ToolInput<'read'>;
export type WriteInput = ToolInput<'write'>;
export type EditInput = ToolInput<'edit'>;
export type GlobInput = ToolInput<'glob'>;
export type GrepInput = ToolInput<'grep'>;

/** After bash exits, how long to keep reading output still held open by background children. */
const DRAIN_MS = 100;


function passedNames(): string[] {
  const extra = (process.env[PASS_ENV_ENV] ?? '').split(',').filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  return [...SANDBOX_PASSED_ENV, ...extra];
}

/** What an MCP hand server runs its tools on: paddock-hand's own disk (`Workspace`) or a sandboxed executor (native-workspace.ts). */
export interface HandTools {
  run(name: string, input: unknown, signal?: AbortSignal): Promise<string>;
  /** Nothing a call started outlives this. */
  dispose(): void;
}

export class Workspace implements HandTools {
  /** The workspace folder with symlinks resolved: the boundary every path is checked against. */
  readonly root: string;
  readonly limits: HandLimits;
  readonly files: WorkspaceTools;
  /** Process groups of bash calls, killed on dispose so nothing outlives the hand. */
  private readonly groups = new Set<number>();

  /** `dir` must exist. */
  constructor(dir: string, limits: Partial<HandLimits> = {}) {
    this.root = realpathSync(path.resolve(dir));
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.files = new WorkspaceTools(nodeToolFs(this.root), this.root, this.limits);
  }

  run(name: string, input: unknown, signal?: AbortSignal): Promise<string> {
    return runTool(this, name, input, signal);
  }

  /** A workspace path → its real absolute path and its workspace-relative one; refuses escapes. */
  resolve(p: string): Promise<{ abs: string; rel: string }> {
    return this.files.resolve(p);
  }

  read(input: ReadInput): Promise<string> {
    return this.files.read(input);
  }

  write(input: WriteInput): Promise<string> {
    return this.files.write(input);
  }

  edit(input: EditInput): Promise<string> {
    return this.files.edit(input);
  }

  glob(input: GlobInput): Promise<string> {
    return this.files.glob(input);
  }

  grep(input: GrepInput): Promise<string> {
    return this.files.grep(input);
  }

  // ── bash ──────────────────────────────────────────────────────────────────

  /**
   * Every command runs in a fresh `bash -c`: no shell state (variables, cd) carries over, so the
   * toolset's `restart` (a fresh shell) is accepted and needs nothing done.
   */
  async bash(input: BashInput, signal?: AbortSignal): Promise<string> {
    const { command, timeout } = bashCall(input, this.limits);
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
      if (end.reason === 'timeout') return bashTrailer(text, { kind: 'timeout', timeoutMs: timeout });
      if (end.reason === 'cancelled') return bashTrailer(text, { kind: 'cancelled' });
      if (exit.sig) return bashTrailer(text, { kind: 'signal', signal: exit.sig });
      return bashTrailer(text, { kind: 'exit', code: exit.code ?? -1 });
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

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one tool by name. The input is parsed here (the toolset's names, Paddock's old ones as
 * aliases), so a caller may pass a call as the model or an old log wrote it.
 */
export async function runTool(ws: Workspace, name: string, input: unknown, signal?: AbortSignal): Promise<string> {
  return name === 'bash' ? ws.bash(parseToolInput('bash', input), signal) : ws.files.run(name, input);
}
