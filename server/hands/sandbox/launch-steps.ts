/**
 * The steps both launcher modes share (launcher.ts: one hand per process; launcher-host.ts: one
 * process per network policy, a hand per request): finding the runtime's tools, the shims, the
 * inner command, the hand's environment and cgroup. Never a sync child process here: a launcher's
 * event loop serves its hands' network proxy.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { createHandCgroup, type HandCgroup } from '~/server/hands/sandbox/cgroup';
import { applySeccompShim, bwrapShim, giveToHand, handIdentity } from '~/server/hands/sandbox/hand-identity';
import type { RuntimeTools } from '~/server/hands/sandbox/runtime-config';
import { socatShim } from '~/server/hands/sandbox/socat-shim';
import { mountsShim } from '~/server/hands/sandbox/mount-binds';
import { TIMINGS_ENV, runtimeTmpDir, sandboxHome, type SandboxPolicy } from '~/server/hands/sandbox/policy';

export const EX_USAGE = 64;
export const EX_UNAVAILABLE = 69;
export const EX_SOFTWARE = 70;
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const timings = process.env[TIMINGS_ENV] === '1';
delete process.env[TIMINGS_ENV];
let lastMark = { cpu: 0, wall: 0 };
/** CPU (user+system, this process only) and wall time since the previous mark; the first since exec. */
export function mark(phase: string): void {
  if (!timings) return;
  const { user, system } = process.cpuUsage();
  const now = { cpu: (user + system) / 1000, wall: performance.now() };
  process.stderr.write(`sandbox-launcher: timing ${phase} cpu=${(now.cpu - lastMark.cpu).toFixed(1)} wall=${(now.wall - lastMark.wall).toFixed(1)}\n`);
  lastMark = now;
}

const INSTALL_HINTS: Record<string, string> = {
  bwrap: 'bubblewrap (bwrap) not found; install it with apt-get install bubblewrap',
  socat: 'socat not found; install it with apt-get install socat',
  rg: 'ripgrep (rg) not found; install it with apt-get install ripgrep',
  setpriv: 'setpriv not found (it ties the proxy bridges to their hand, and a root server runs hands as their own uid with it); install it with apt-get install util-linux',
};

export class LauncherError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const unavailable = (what: string) => new LauncherError(EX_UNAVAILABLE, `sandbox unavailable: ${what}`);

/** `which` by hand: a missing binary gets our own message, with the package to install. */
async function findOnPath(bin: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, bin);
    try {
      await fs.access(candidate, fs.constants.X_OK);
      if ((await fs.stat(candidate)).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** `setpriv`: every bridge dies with its launcher (socat-shim.ts); as root, hands drop to their own uid with it. */
export type Tools = RuntimeTools & { setpriv: string };

/** Root on the host: a hand would be root too, so it runs as a uid of its own (hand-identity.ts). */
export const asRoot = () => process.geteuid?.() === 0;

/**
 * Finds what the runtime needs and asks the runtime itself (platform, uid-0 capability probe).
 * The binaries are resolved here and passed as absolute paths, so the sandboxed command's PATH
 * need not contain them.
 */
export async function checkDependencies(): Promise<Tools> {
  if (!SandboxManager.isSupportedPlatform()) throw unavailable(`platform ${process.platform} is not supported`);
  const found = {
    bwrap: await findOnPath('bwrap'),
    socat: await findOnPath('socat'),
    rg: await findOnPath('rg'),
    setpriv: await findOnPath('setpriv'),
  };
  const missing = (Object.keys(found) as (keyof typeof found)[]).filter((k) => !found[k]);
  if (missing.length > 0) throw unavailable(missing.map((k) => INSTALL_HINTS[k]).join('; '));
  const tools = found as Tools;
  // Its checks use spawnSync (which, bwrap probes): harmless here, before any proxy runs.
  const deps = await SandboxManager.checkDependenciesAsync({ command: tools.rg });
  if (deps.errors.length > 0) throw unavailable(deps.errors.join('; '));
  return tools;
}

/**
 * The tools the server's `--check` found (TOOLS_ENV), when each is still an executable file at an
 * absolute path: the checks were done once for the server. Otherwise the checks, here.
 */
export async function checkedTools(json: string | undefined): Promise<Tools> {
  if (json) {
    try {
      const t = JSON.parse(json) as Record<string, unknown>;
      const names = ['bwrap', 'socat', 'rg', 'setpriv'] as const;
      const [bwrap, socat, rg, setpriv] = names.map((k) => t[k]);
      const all = [bwrap, socat, rg, setpriv];
      if (all.every((v): v is string => typeof v === 'string' && path.isAbsolute(v))) {
        await Promise.all(all.map((v) => fs.access(v, fs.constants.X_OK)));
        return { bwrap: bwrap as string, socat: socat as string, rg: rg as string, setpriv: setpriv as string };
      }
    } catch {
      // gone or not ours: check as ever
    }
  }
  return checkDependencies();
}

/**
 * The runtime's own helper binaries (apply-seccomp), which run inside the sandbox: readable even
 * when the project folder holding node_modules is hidden. Next to this file when bundled (see
 * launcher-bundle.ts), else in the package.
 */
export function runtimeVendorDir(): string {
  const bundled = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vendor', 'seccomp');
  if (existsSync(bundled)) return bundled;
  const entry = fileURLToPath(import.meta.resolve('@anthropic-ai/sandbox-runtime'));
  return path.join(path.dirname(path.dirname(entry)), 'vendor', 'seccomp');
}

export const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The inner script. TMPDIR is set here, not in the env, because the runtime's own
 * `--setenv TMPDIR /tmp/claude` would override an inherited one. The rlimits are hard (no process
 * in the hand can raise them); `-u` binds only non-root users, so the cgroup is what really
 * counts processes, but a command reading `ulimit -u` sees the hand's figure.
 */
export function innerCommand(policy: SandboxPolicy, argv: string[]): string {
  const { maxProcs, fileSizeMb } = policy.limits;
  const limits = [
    maxProcs > 0 ? `ulimit -H -S -u ${maxProcs}` : '',
    fileSizeMb > 0 ? `ulimit -H -S -f ${fileSizeMb * 1024}` : '',
  ].filter(Boolean);
  const prefix = limits.length > 0 ? `${limits.join(' && ')} || exit 70; ` : '';
  return `${prefix}export TMPDIR=${quote(policy.tmpDir)}; exec ${argv.map(quote).join(' ')}`;
}

/**
 * The hand's cgroup (process count and memory of the whole hand), or null where this machine has
 * no writable cgroups: then only the per-process rlimits bound it, and we say so.
 */
export async function handCgroup(name: string, policy: SandboxPolicy): Promise<HandCgroup | null> {
  const group = await createHandCgroup(name, policy.limits);
  if (!group && (policy.limits.maxProcs > 0 || policy.limits.memoryMb > 0)) {
    process.stderr.write('sandbox-launcher: warning: no writable cgroup here; the hand has per-process limits only\n');
  }
  return group;
}

/** The shell that starts the wrapped command, joining the hand's cgroup first (nothing of the hand starts outside it). */
export function cgroupScript(wrapped: string, group: HandCgroup | null): string {
  const join = (group?.procsFiles ?? []).map((f) => `echo $$ > ${quote(f)} || exit 70; `).join('');
  return join ? `${join}exec /bin/bash -c ${quote(wrapped)}` : wrapped;
}

/**
 * The command's whole environment: nothing of ours (the policy, the server's env) gets in. (Typed
 * as ProcessEnv by a cast: Next's global types make NODE_ENV required, and a clean env has none.)
 */
export function childEnv(policy: SandboxPolicy, extra: Record<string, string>): NodeJS.ProcessEnv {
  const nodeDir = path.dirname(process.execPath);
  const PATH = SYSTEM_PATH.split(':').includes(nodeDir) ? SYSTEM_PATH : `${SYSTEM_PATH}:${nodeDir}`;
  const env: Record<string, string> = {
    PATH,
    // As root, the sandbox's root stage gets a HOME it can enter and holding no start-up file (bash
    // on a socket stdin reads ~/.bashrc); the seccomp helper's shim gives the hand its own.
    HOME: asRoot() ? runtimeTmpDir(policy) : sandboxHome(policy),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: policy.tmpDir,
    ...extra,
  };
  return env as NodeJS.ProcessEnv;
}

/** Extra variables for the command: a JSON object of strings, or a usage error naming what is wrong. */
export function parseExtraEnv(json: string | undefined, what: string): Record<string, string> {
  const extraEnv: Record<string, string> = {};
  if (!json) return extraEnv;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new LauncherError(EX_USAGE, `${what} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new LauncherError(EX_USAGE, `${what} must be a JSON object of strings`);
  }
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw new LauncherError(EX_USAGE, `${what}.${k} must be a string`);
    extraEnv[k] = v;
  }
  return extraEnv;
}

/** The folders a hand needs before its wrap: bubblewrap skips a bind whose source is missing, and the command's cwd must exist. */
export async function makeHandDirs(policy: SandboxPolicy): Promise<void> {
  await fs.mkdir(policy.workspace, { recursive: true });
  await fs.mkdir(policy.tmpDir, { recursive: true, mode: 0o700 });
  await fs.mkdir(sandboxHome(policy), { recursive: true, mode: 0o700 });
  await fs.mkdir(runtimeTmpDir(policy), { recursive: true, mode: 0o700 });
  // bubblewrap skips a bind whose source is missing.
  for (const m of policy.mounts ?? []) await fs.mkdir(m.source, { recursive: true });
}

/**
 * What any launcher gives the runtime, written once into its runtime dir: a socat that dies with
 * the launcher (socat-shim.ts) and, as root, the bubblewrap shim (hand-identity.ts), which holds
 * nothing of any one hand. The dir then becomes readable: the hand's uid must reach what is bound in.
 */
export async function launcherTools(tools: Tools, dir: string): Promise<Tools> {
  const socat = await socatIn(tools, dir);
  if (!asRoot()) return { ...tools, socat };
  await fs.chmod(dir, 0o755);
  const bwrap = path.join(dir, 'bwrap');
  await fs.writeFile(bwrap, bwrapShim(tools.bwrap), { mode: 0o700 });
  return { ...tools, socat, bwrap };
}

/**
 * The socat shim written into `dir`. The runtime starts the sandbox's own relays to its proxy with
 * the same path inside the sandbox: a shared launcher writes one into each hand's runtime dir too,
 * which the hand can read (its own is hidden with the rest of the OS tmp dir).
 */
export async function socatIn(tools: Tools, dir: string): Promise<string> {
  const socat = path.join(dir, 'socat');
  await fs.writeFile(socat, socatShim(tools.setpriv, tools.socat), { mode: 0o700 });
  return socat;
}

/**
 * What is one hand's own, written into `dir` (its runtime dir: root's, readable inside the
 * sandbox, the shims root's alone): its mounts' binds (a bwrap in front of the runtime's,
 * mount-binds.ts), and as root its writable folders become its uid's and the seccomp helper the
 * runtime starts is a shim that becomes that uid first (hand-identity.ts).
 */
export async function handIdentityTools(policy: SandboxPolicy, found: Tools, dir: string): Promise<Tools> {
  const tools = { ...found, bwrap: await withMounts(policy, found.bwrap, dir) };
  if (!asRoot()) return tools;
  const id = handIdentity(policy.workspace);
  const writableMounts = (policy.mounts ?? []).filter((m) => !m.readOnly).map((m) => m.source);
  for (const d of [...policy.allowWrite, sandboxHome(policy), ...writableMounts]) await giveToHand(d, id);
  await fs.chmod(dir, 0o755);
  const apply = path.join(runtimeVendorDir(), process.arch === 'arm64' ? 'arm64' : 'x64', 'apply-seccomp');
  if (!existsSync(apply)) throw unavailable(`the sandbox runtime's seccomp helper is missing (${apply})`);
  const applySeccomp = path.join(dir, 'apply-seccomp');
  await fs.writeFile(applySeccomp, applySeccompShim(id, tools.setpriv, apply, sandboxHome(policy)), { mode: 0o700 });
  return { ...tools, applySeccomp };
}

/** The policy's mounts: a bwrap in front of `bwrap` that adds their binds, or `bwrap` itself without any. */
async function withMounts(policy: SandboxPolicy, bwrap: string, dir: string): Promise<string> {
  const mounts = policy.mounts ?? [];
  if (mounts.length === 0) return bwrap;
  const shim = path.join(dir, 'bwrap-mounts');
  await fs.writeFile(shim, mountsShim(bwrap, mounts), { mode: 0o700 });
  return shim;
}

export const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null) =>
  code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
