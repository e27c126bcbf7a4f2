import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { type HandSecret, SECRETS_ON_STDIN_ENV, secretsLine } from '~/server/hands/sandbox/hand-secret';
import { CHILD_ENV_ENV, POLICY_ENV, TIMINGS_ENV, TOOLS_ENV, sandboxHome, type SandboxPolicy } from '~/server/hands/sandbox/policy';

/** After SIGTERM to the launcher's group, this long before SIGKILL. */
const KILL_GRACE_MS = 3_000;

/**
 * The launcher script. Resolved from the working directory (the repo root, for the server and for
 * vitest) rather than import.meta.url, which a Next.js bundle does not keep pointing at the source.
 */
export function launcherPath(): string {
  return path.join(process.cwd(), 'bin', 'sandbox-launcher.mjs');
}

export interface SandboxedCommand {
  policy: SandboxPolicy;
  /** argv of the command to run inside the sandbox, e.g. `['node', 'bin/paddock-hand.mjs']`. */
  command: string[];
  /** Variables for the command, on top of PATH, HOME (sandboxHome), LANG, TERM, TMPDIR. */
  env?: Record<string, string>;
  /** Where the launcher looks for bwrap, socat and rg; defaults to the server's PATH. */
  hostPath?: string;
  /** The launcher script: a prebuilt bundle (launcher-bundle.ts) or, by default, the tsx entry. */
  launcher?: string;
  /**
   * Secrets for the hand's egress proxy: the launcher then reads them as the first line on its
   * stdin (the caller writes `secretsLine(...)` there before anything else); the command sees placeholders.
   */
  secrets?: readonly HandSecret[];
  /** The tools the server's check found (checkSandboxAvailable): the launcher then skips its own checks. */
  tools?: string;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The launcher idles for the hand's life: a small young generation keeps it resident-light. */
export const LAUNCHER_NODE_FLAGS = ['--max-semi-space-size=1'];

/**
 * How to start the launcher: for `spawn` or an MCP StdioClientTransport. The environment holds
 * only what the launcher needs (PATH to find bwrap/socat/rg, an upstream proxy if the server has
 * one) plus the policy: none of the server's secrets.
 */
export function launcherInvocation({ policy, command, env, hostPath, launcher, secrets, tools }: SandboxedCommand): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  const launcherEnv: Record<string, string> = {
    PATH: hostPath ?? process.env.PATH ?? DEFAULT_PATH,
    // The runtime makes ~/.npm/_logs and ~/.claude/debug writable: keep those in the hand's own home.
    HOME: sandboxHome(policy),
    LANG: 'C.UTF-8',
    [POLICY_ENV]: JSON.stringify(policy),
  };
  if (env && Object.keys(env).length > 0) launcherEnv[CHILD_ENV_ENV] = JSON.stringify(env);
  if (secrets && secrets.length > 0) launcherEnv[SECRETS_ON_STDIN_ENV] = '1';
  if (tools) launcherEnv[TOOLS_ENV] = tools;
  // The launcher's proxy dials out through the server's own upstream proxy, if there is one, and
  // trusts the CAs the server was told to trust (a TLS-terminating hand proxy verifies upstreams).
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'NODE_EXTRA_CA_CERTS', TIMINGS_ENV]) {
    const value = process.env[name];
    if (value) launcherEnv[name] = value;
  }
  // A prebuilt launcher keeps V8's compiled code beside it: each start skips most of the parsing.
  if (launcher) launcherEnv.NODE_COMPILE_CACHE = path.join(path.dirname(launcher), '.compile-cache');
  return { command: process.execPath, args: [...LAUNCHER_NODE_FLAGS, launcher ?? launcherPath(), '--', ...command], env: launcherEnv };
}

export interface SandboxedProcess {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Resolves once the launcher has exited (the command and its sandbox are gone with it). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * SIGTERM to the launcher's whole process group (launcher, its proxy bridges, the sandbox), then
   * SIGKILL if it has not exited after a grace period. Resolves when it has exited.
   */
  kill(): Promise<void>;
}

/**
 * Starts `command` inside the sandbox for `policy`, through the launcher, as a process group of its
 * own. Keep stdin open for as long as the command should live: the launcher ends the command when
 * its stdin closes.
 */
export function spawnSandboxed(opts: SandboxedCommand): SandboxedProcess {
  const inv = launcherInvocation(opts);
  const child = spawn(inv.command, inv.args, {
    env: inv.env as NodeJS.ProcessEnv, // a cast: Next's types make NODE_ENV required; a clean env has none
    detached: true, // its own group, so kill() reaches the proxy bridges too
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (opts.secrets && opts.secrets.length > 0) child.stdin.write(secretsLine(opts.secrets));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is already gone
    }
  };
  let killing: Promise<void> | undefined;
  const kill = () =>
    (killing ??= (async () => {
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
      await exited;
      clearTimeout(timer);
    })());
  return { child, exited, kill };
}

/**
 * Whether this machine can run sandboxed hands: asks the launcher (`--check`), which checks the
 * runtime's dependencies and then runs `true` in a sandbox. Async only: a sync child process
 * would block the event loop that may be serving a sandbox's proxy.
 */
export async function checkSandboxAvailable(
  opts: { hostPath?: string } = {},
): Promise<{ ok: true; tools?: string } | { ok: false; missing: string }> {
  const env: Record<string, string> = { PATH: opts.hostPath ?? process.env.PATH ?? DEFAULT_PATH, LANG: 'C.UTF-8' };
  const child = spawn(process.execPath, [launcherPath(), '--check'], {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', (c) => resolve(c));
  });
  // The tools it found, for every launcher after it (TOOLS_ENV): the checks once per server.
  const tools = stdout.trim().split('\n').at(-1);
  if (code === 0) return tools?.startsWith('{') ? { ok: true, tools } : { ok: true };
  const reason = stderr.trim().replace(/^sandbox-launcher: /, '') || `the sandbox check exited with code ${code}`;
  return { ok: false, missing: reason };
}
