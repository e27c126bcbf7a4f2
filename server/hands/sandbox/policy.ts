import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { type BindMount, BindMountSchema } from '~/server/hands/sandbox/mount-binds';

/**
 * What one sandboxed hand may do: write only in its workspace and private tmp; read the system
 * (programs, libraries, /etc) but none of `denyRead` except what `allowRead` opens again (its own
 * workspace, tmp and the hand's code); reach only `allowedDomains` (empty = no network at all), or
 * with `network: 'unrestricted'` any public host;
 * stay within `limits`. One launcher process enforces one policy, because sandbox-runtime's
 * network filter is global per process.
 */
export interface SandboxPolicy {
  /** The hand's working directory. */
  workspace: string;
  /**
   * Where the launcher stands when the runtime wraps the command (default: the workspace). The
   * runtime masks dotfiles, `.vscode`, `.git/hooks`, … at the top of that folder with /dev/null
   * and denies the hooks and configs of the repositories it finds below: a hand folder holding the
   * workspace keeps those masks out of the agent's listing while its repositories stay protected.
   */
  protectRoot?: string;
  /** The hand's private TMPDIR; its HOME is a directory inside it (see sandboxHome). */
  tmpDir: string;
  /** Where writes are allowed: the workspace and tmpDir. */
  allowWrite: string[];
  /** Paths hidden from the hand (an empty directory or nothing appears in their place). */
  denyRead: string[];
  /** Paths inside `denyRead` regions bound back, read-only unless also in `allowWrite`. */
  allowRead: string[];
  /** Hosts reachable through the runtime's proxy: exact names, `*.example.com`, or IP literals. */
  allowedDomains: string[];
  /**
   * `limited`: `allowedDomains` only. `unrestricted`: any host besides, but never a private,
   * loopback or link-local address that `allowedDomains` does not name (see runtime-config.ts).
   */
  network: 'limited' | 'unrestricted';
  /** Bounds on the whole hand (every process in it together); 0 = none. */
  limits: SandboxLimits;
  /** Host folders bound at other paths in the hand (`/mnt/session/…`; mount-binds.ts). */
  mounts?: BindMount[];
}

export interface SandboxLimits {
  /** Processes and threads alive at once. */
  maxProcs: number;
  /** Memory of all its processes together. */
  memoryMb: number;
  /** Largest file any of its processes may write. */
  fileSizeMb: number;
}

export const NO_LIMITS: SandboxLimits = { maxProcs: 0, memoryMb: 0, fileSizeMb: 0 };

/** The variable that carries the policy JSON to the launcher; the launcher never forwards it. */
export const POLICY_ENV = 'PADDOCK_SANDBOX_POLICY';
/** Extra variables for the sandboxed command (JSON object), read and dropped by the launcher. */
export const CHILD_ENV_ENV = 'PADDOCK_SANDBOX_CHILD_ENV';
/**
 * The runtime's tools (bwrap, socat, rg, setpriv) as the server's one `--check` found them (JSON):
 * a launcher given them skips the runtime's dependency checks, done once per server, not per hand.
 */
export const TOOLS_ENV = 'PADDOCK_SANDBOX_TOOLS';
/** `1`: the launcher prints each start-up phase's CPU and wall time on stderr (bench/hand-profile.ts). */
export const TIMINGS_ENV = 'PADDOCK_LAUNCHER_TIMINGS';

const AbsolutePath = z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path');

const PolicySchema = z.strictObject({
  workspace: AbsolutePath,
  protectRoot: AbsolutePath.optional(),
  tmpDir: AbsolutePath,
  allowWrite: z.array(AbsolutePath),
  denyRead: z.array(AbsolutePath),
  allowRead: z.array(AbsolutePath),
  allowedDomains: z.array(z.string().min(1)),
  network: z.enum(['limited', 'unrestricted']),
  limits: z.strictObject({
    maxProcs: z.number().int().min(0),
    memoryMb: z.number().int().min(0),
    fileSizeMb: z.number().int().min(0),
  }),
  mounts: z.array(BindMountSchema).optional(),
});

/**
 * The hand's HOME: inside its tmp dir, not the workspace. sandbox-runtime masks dotfiles at the top
 * of the workspace (.gitconfig, .bashrc, … become unreadable /dev/null binds), so a HOME there
 * would break git and shells.
 */
export function sandboxHome(policy: SandboxPolicy): string {
  return path.join(policy.tmpDir, 'home');
}

/**
 * The launcher's own TMPDIR, where sandbox-runtime puts its proxy bridge sockets and mount
 * sources: outside the hand's writable tmp, but readable in the sandbox (the sockets are bound in,
 * and the rest of the OS tmp dir is hidden).
 */
export function runtimeTmpDir(policy: Pick<SandboxPolicy, 'tmpDir'>): string {
  return `${policy.tmpDir}.srt`;
}

/** Parses and validates a policy received as JSON; throws an Error naming the bad field. */
export function parseSandboxPolicy(json: string): SandboxPolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('sandbox policy is not valid JSON');
  }
  const parsed = PolicySchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`invalid sandbox policy: ${issues}`);
  }
  return parsed.data;
}

/** Credential stores under a home directory that no hand has any business reading. */
const HOME_SECRETS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.config/gcloud',
  '.config/gh',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.pgpass',
  '.bash_history',
];

/** System files holding machine secrets (readable here because the server may run as root). */
const SYSTEM_SECRETS = ['/root', '/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/sudoers.d'];

/**
 * Where other hands, users and the server keep their files: hidden as whole folders (each
 * becomes an empty private tmpfs), so a new place another hand writes to is hidden without
 * being listed. The hand's own workspace and tmp are bound back (`allowRead`).
 */
const SHARED_SCRATCH = ['/tmp', '/var/tmp', '/home', '/root', '/mnt', '/media', '/srv'];

export interface SandboxPolicyOptions {
  workspace: string;
  /** See SandboxPolicy.protectRoot: the workspace or a folder above it. */
  protectRoot?: string;
  /** The server's data directory (database, key files): denied as a whole. */
  dataDir: string;
  /** Defaults to a directory under the OS tmp dir derived from the workspace path. */
  tmpDir?: string;
  /** A `PADDOCK_MASTER_KEY` key file, when it lives outside dataDir. */
  masterKeyFile?: string;
  /** Any other paths to hide. */
  extraDenyRead?: string[];
  /** Empty or absent = no network (unless unrestricted). */
  allowedDomains?: string[];
  /** Default `limited`. */
  network?: 'limited' | 'unrestricted';
  /** The server's home directory; defaults to os.homedir(). */
  home?: string;
  /** The server's working directory (the project: source, `.env*`, data): hidden; defaults to process.cwd(). */
  serverDir?: string;
  /** The folder holding every hand's workspace: hidden, but for this hand's own workspace. */
  workspacesDir?: string;
  /** Files or folders the hand needs to run (its code bundle): readable, not writable. */
  handCode?: string[];
  limits?: SandboxLimits;
  /** Host folders bound at other paths in the hand. */
  mounts?: BindMount[];
}

/** Builds the policy for one hand with the defaults every hand gets. Paths are made absolute. */
export function sandboxPolicy(opts: SandboxPolicyOptions): SandboxPolicy {
  // turbopackIgnore: runtime paths, not files to bundle (else Next traces the whole project).
  const workspace = path.resolve(/*turbopackIgnore: true*/ opts.workspace);
  const tmpDir = path.resolve(/*turbopackIgnore: true*/ opts.tmpDir ?? defaultTmpDir(workspace));
  const home = opts.home ?? os.homedir();
  const serverDir = path.resolve(/*turbopackIgnore: true*/ opts.serverDir ?? process.cwd());
  const denyRead = [
    ...SHARED_SCRATCH,
    path.resolve(os.tmpdir()),
    home,
    serverDir,
    ...(opts.workspacesDir ? [path.resolve(/*turbopackIgnore: true*/ opts.workspacesDir)] : []),
    path.resolve(/*turbopackIgnore: true*/ opts.dataDir),
    ...(opts.masterKeyFile ? [path.resolve(/*turbopackIgnore: true*/ opts.masterKeyFile)] : []),
    ...HOME_SECRETS.map((p) => path.join(/*turbopackIgnore: true*/ home, p)),
    ...SYSTEM_SECRETS,
    ...sshHostKeys(),
    ...envFiles(serverDir),
    ...(opts.extraDenyRead ?? []).map((p) => path.resolve(p)),
  ];
  const protectRoot = opts.protectRoot === undefined ? undefined : path.resolve(/*turbopackIgnore: true*/ opts.protectRoot);
  if (protectRoot !== undefined && path.relative(protectRoot, workspace).startsWith('..')) {
    throw new Error(`protectRoot ${protectRoot} must be the workspace or a folder above it`);
  }
  return {
    workspace,
    ...(protectRoot !== undefined ? { protectRoot } : {}),
    tmpDir,
    allowWrite: [workspace, tmpDir],
    // A deny above the workspace (a workspace under dataDir) still leaves the workspace usable:
    // sandbox-runtime binds the write roots back over the hidden directory.
    denyRead: [...new Set(denyRead)],
    // Allow beats deny in the runtime: only these come back inside the hidden folders.
    allowRead: [
      workspace,
      tmpDir,
      runtimeTmpDir({ tmpDir }),
      ...(opts.handCode ?? []).map((p) => path.resolve(/*turbopackIgnore: true*/ p)),
      ...nodeBinary(denyRead),
    ],
    allowedDomains: [...new Set(opts.allowedDomains ?? [])],
    network: opts.network ?? 'limited',
    limits: opts.limits ?? NO_LIMITS,
    ...(opts.mounts && opts.mounts.length > 0 ? { mounts: opts.mounts } : {}),
  };
}

/**
 * The Node binary the hand runs on, when it sits inside a hidden folder (Node 22 fetched into
 * ~/.cache by scripts/supported-node.sh, or an nvm install): readable again, and only its folder.
 */
function nodeBinary(denyRead: string[]): string[] {
  const bin = path.dirname(process.execPath);
  const hidden = denyRead.some((d) => bin === d || bin.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
  return hidden ? [bin] : [];
}

/** Stable per workspace, so a re-provisioned hand on the same workspace finds its tmp again. */
function defaultTmpDir(workspace: string): string {
  const id = createHash('sha256').update(workspace).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `paddock-hand-${id}`);
}

/** The host's SSH private keys (the public halves stay readable). */
function sshHostKeys(): string[] {
  return listDir('/etc/ssh')
    .filter((n) => n.startsWith('ssh_host_') && !n.endsWith('.pub'))
    .map((n) => path.join('/etc/ssh', n));
}

/** `.env`, `.env.local`, … next to the server: Next.js loads secrets from them. */
function envFiles(dir: string): string[] {
  return listDir(dir)
    .filter((n) => n === '.env' || n.startsWith('.env.'))
    .map((n) => path.join(path.resolve(dir), n));
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
