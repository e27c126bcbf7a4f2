import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '~/lib/hand';
import { type EntryShape, isSandboxMask, SANDBOX_MASKED_NAMES } from '~/lib/sandbox-masks';
import { parseToolInput } from '~/lib/tool-inputs';
import { type BashEnd, bashCall, bashTrailer, CappedOutput, SANDBOX_PASSED_ENV } from '~/lib/workspace-tools/bash-rules';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import { errnoOf, type ToolFs } from '~/lib/workspace-tools/tool-fs';
import { TOOL_LIMITS, type ToolLimits } from '~/lib/workspace-tools/tool-limits';
import type { ExecClient } from '~/server/hands/sandbox/native-exec-client';

/** Signal numbers (Linux) → the names paddock-hand's trailer says. */
const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM', 24: 'SIGXCPU', 25: 'SIGXFSZ' };


async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/**
 * A sandboxed hand's disk as the file tools' `ToolFs`, every call done by its executor inside the
 * sandbox: a path or a link resolves in the hand's mount namespace, so no link an agent plants can
 * make this (host) process read or write a host file. The top level leaves out the runtime's
 * placeholders, as paddock-hand's disk does (node-tool-fs.ts).
 */
export function nativeToolFs(exec: ExecClient, root: string): ToolFs {
  async function isMask(dir: string, name: string, kind: string): Promise<boolean> {
    if (dir !== root || !SANDBOX_MASKED_NAMES.has(name)) return false;
    const abs = `${root}/${name}`;
    try {
      const shape: EntryShape = kind === 'dir' ? { kind: 'directory', entries: (await exec.readdir(abs)).length } : { kind: 'file', size: (await exec.stat(abs, false)).size };
      return isSandboxMask(name, shape);
    } catch {
      return false;
    }
  }
  return {
    lstat: (abs) => orNull(exec.stat(abs, false)),
    stat: (abs) => orNull(exec.stat(abs, true)),
    readBytes: (abs) => exec.read(abs),
    writeText: (abs, content) => exec.write(abs, Buffer.from(content, 'utf8')),
    list: async (abs) => {
      const out = [];
      for (const entry of await exec.readdir(abs)) if (!(await isMask(abs, entry.name, entry.kind))) out.push(entry);
      return out;
    },
    realpath: (abs) => exec.realpath(abs),
    readlink: (abs) => exec.readlink(abs),
  };
}

/**
 * paddock-hand's six tools over a resident executor in the sandbox: the file tools every hand
 * shares over `nativeToolFs`, and bash with paddock-hand's rules (tools.ts): a fresh `bash -c` in
 * its own process group, a clean environment, the ulimits, the timeout and cancel killing the group.
 */
export class NativeWorkspace {
  readonly limits: ToolLimits;
  readonly files: WorkspaceTools;

  constructor(
    private readonly exec: ExecClient,
    /** The workspace folder, symlinks resolved, as the sandbox sees it. */
    readonly root: string,
    limits: Partial<ToolLimits> = {},
  ) {
    this.limits = { ...TOOL_LIMITS, ...limits };
    this.files = new WorkspaceTools(nativeToolFs(exec, root), root, this.limits);
  }

  async run(name: string, input: unknown, signal?: AbortSignal): Promise<string> {
    return name === 'bash' ? this.bash(input, signal) : this.files.run(name, input);
  }

  async bash(input: unknown, signal?: AbortSignal): Promise<string> {
    const { command, timeout } = bashCall(parseToolInput('bash', input), this.limits);
    if (signal?.aborted) throw new ToolError('bash: cancelled before it started');
    const ulimits = [
      this.limits.memoryMb > 0 ? `ulimit -S -v ${this.limits.memoryMb * 1024}` : '',
      this.limits.cpuSeconds > 0 ? `ulimit -S -t ${this.limits.cpuSeconds}` : '',
    ].filter(Boolean);
    const script = ulimits.length > 0 ? `${ulimits.join('; ')}\n${command}` : command;
    const env = [
      'PATH=/usr/local/bin:/usr/bin:/bin',
      '=PATH',
      `HOME=${this.root}`,
      '=HOME',
      `PWD=${this.root}`,
      'LANG=C.UTF-8',
      'TERM=dumb',
      ...SANDBOX_PASSED_ENV.map((n) => `=${n}`),
    ];
    const output = new CappedOutput(this.limits.outputChars);
    const stdout = new StringDecoder('utf8');
    const stderr = new StringDecoder('utf8');
    const end: { reason?: 'timeout' | 'cancelled' } = {};
    let id: number | undefined;
    let onExit: (status: number) => void = () => undefined;
    const exited = new Promise<number>((resolve) => (onExit = resolve));
    try {
      id = await this.exec.spawn(
        { cwd: this.root, script, env },
        { onOut: (b) => output.push(stdout.write(b)), onErr: (b) => output.push(stderr.write(b)), onExit: (s) => onExit(s) },
      );
    } catch (e) {
      throw new ToolError(`bash: could not start /bin/bash: ${(e as Error).message}`);
    }
    const kill = (reason: 'timeout' | 'cancelled') => {
      end.reason ??= reason;
      if (id !== undefined) this.exec.kill(id);
    };
    const timer = setTimeout(() => kill('timeout'), timeout);
    const onAbort = () => kill('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const status = await exited;
      output.push(stdout.end() + stderr.end());
      const text = output.text();
      if (status < 0) throw new ToolError(`bash: the hand's executor stopped while the command ran\n${text}`);
      if (end.reason === 'timeout') return bashTrailer(text, { kind: 'timeout', timeoutMs: timeout });
      if (end.reason === 'cancelled') return bashTrailer(text, { kind: 'cancelled' });
      return bashTrailer(text, endOf(status));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The executor kills every group it started when its input ends (the hand's end). */
  dispose(): void {
    this.exec.close();
  }
}

/** A raw wait status → how the command ended. */
function endOf(status: number): BashEnd {
  const sig = status & 0x7f;
  if (sig === 0) return { kind: 'exit', code: (status >> 8) & 0xff };
  return { kind: 'signal', signal: SIGNALS[sig] ?? `signal ${sig}` };
}
