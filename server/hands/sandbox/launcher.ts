/**
 * The sandbox launcher: one process per hand. It reads the hand's policy from PADDOCK_SANDBOX_POLICY,
 * starts sandbox-runtime's network proxy for that policy (the filter is global per process, hence one
 * launcher per policy), and runs `argv after --` inside bubblewrap with stdin/stdout/stderr passed
 * through, so an MCP stdio server can run over it. It exits with the command's code.
 *
 *   node bin/sandbox-launcher.mjs -- <command> [args…]
 *   node bin/sandbox-launcher.mjs --check      (exit 0, or 69 with "sandbox unavailable: …")
 *
 * No spawnSync/execSync here once the proxy runs: it lives on this event loop, and a blocked loop
 * would hang every network call from inside the sandbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { createHandCgroup, GROUP_PREFIX, type HandCgroup } from '~/server/hands/sandbox/cgroup';
import { applySeccompShim, bwrapShim, giveToHand, handIdentity } from '~/server/hands/sandbox/hand-identity';
import { type HandSecret, PASS_ENV_ENV, SECRETS_ON_STDIN_ENV, parseSecretsLine } from '~/server/hands/sandbox/hand-secret';
import { socatShim } from '~/server/hands/sandbox/socat-shim';
import { mountsShim } from '~/server/hands/sandbox/mount-binds';
import { scrubPairs, scrubProxyResponses } from '~/server/hands/sandbox/response-scrub';
import { hostAndPort, injectionRules } from '~/server/hands/sandbox/secret-injection';
import { type RuntimeTools, askCallbackFor, runtimeConfig } from '~/server/hands/sandbox/runtime-config';
import {
  CHILD_ENV_ENV,
  NO_LIMITS,
  POLICY_ENV,
  TIMINGS_ENV,
  parseSandboxPolicy,
  runtimeTmpDir,
  sandboxHome,
  type SandboxPolicy,
} from '~/server/hands/sandbox/policy';

const EX_USAGE = 64;
const EX_UNAVAILABLE = 69;
const EX_SOFTWARE = 70;
/** After our stdin closes, the command gets this long to finish on its own before SIGTERM. */
const STDIN_EOF_GRACE_MS = 2_000;
/** After SIGTERM, this long before SIGKILL. */
const KILL_GRACE_MS = 3_000;
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const timings = process.env[TIMINGS_ENV] === '1';
delete process.env[TIMINGS_ENV];
let lastMark = { cpu: 0, wall: 0 };
/** CPU (user+system, this process only) and wall time since the previous mark; the first since exec. */
function mark(phase: string): void {
  if (!timings) return;
  const { user, system } = process.cpuUsage();
  const now = { cpu: (user + system) / 1000, wall: performance.now() };
  process.stderr.write(`sandbox-launcher: timing ${phase} cpu=${(now.cpu - lastMark.cpu).toFixed(1)} wall=${(now.wall - lastMark.wall).toFixed(1)}\n`);
  lastMark = now;
}
mark('boot+load');

const INSTALL_HINTS: Record<string, string> = {
  bwrap: 'bubblewrap (bwrap) not found; install it with apt-get install bubblewrap',
  socat: 'socat not found; install it with apt-get install socat',
  rg: 'ripgrep (rg) not found; install it with apt-get install ripgrep',
  setpriv: 'setpriv not found (it ties the proxy bridges to their hand, and a root server runs hands as their own uid with it); install it with apt-get install util-linux',
};

class LauncherError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

const unavailable = (what: string) => new LauncherError(EX_UNAVAILABLE, `sandbox unavailable: ${what}`);

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
type Tools = RuntimeTools & { setpriv: string };

/** Root on the host: a hand would be root too, so it runs as a uid of its own (hand-identity.ts). */
const asRoot = () => process.geteuid?.() === 0;

/**
 * Finds what the runtime needs and asks the runtime itself (platform, uid-0 capability probe).
 * The binaries are resolved here and passed as absolute paths, so the sandboxed command's PATH
 * need not contain them.
 */
async function checkDependencies(): Promise<Tools> {
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
 * The runtime's own helper binaries (apply-seccomp), which run inside the sandbox: readable even
 * when the project folder holding node_modules is hidden. Next to this file when bundled (see
 * launcher-bundle.ts), else in the package.
 */
function runtimeVendorDir(): string {
  const bundled = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vendor', 'seccomp');
  if (existsSync(bundled)) return bundled;
  const entry = fileURLToPath(import.meta.resolve('@anthropic-ai/sandbox-runtime'));
  return path.join(path.dirname(path.dirname(entry)), 'vendor', 'seccomp');
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The inner script. TMPDIR is set here, not in the env, because the runtime's own
 * `--setenv TMPDIR /tmp/claude` would override an inherited one. The rlimits are hard (no process
 * in the hand can raise them); `-u` binds only non-root users, so the cgroup is what really
 * counts processes, but a command reading `ulimit -u` sees the hand's figure.
 */
function innerCommand(policy: SandboxPolicy, argv: string[]): string {
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
async function handCgroup(policy: SandboxPolicy): Promise<HandCgroup | null> {
  const group = await createHandCgroup(`${GROUP_PREFIX}${process.pid}`, policy.limits);
  if (!group && (policy.limits.maxProcs > 0 || policy.limits.memoryMb > 0)) {
    process.stderr.write('sandbox-launcher: warning: no writable cgroup here; the hand has per-process limits only\n');
  }
  return group;
}

/**
 * The command's whole environment: nothing of ours (the policy, the server's env) gets in. (Typed
 * as ProcessEnv by a cast: Next's global types make NODE_ENV required, and a clean env has none.)
 */
function childEnv(policy: SandboxPolicy, extra: Record<string, string>): NodeJS.ProcessEnv {
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

function readInputs(): { policy: SandboxPolicy; extraEnv: Record<string, string>; secretsOnStdin: boolean } {
  const policyJson = process.env[POLICY_ENV];
  const extraJson = process.env[CHILD_ENV_ENV];
  const secretsOnStdin = process.env[SECRETS_ON_STDIN_ENV] === '1';
  // Gone from our env at once, so nothing we start can inherit them by accident.
  delete process.env[POLICY_ENV];
  delete process.env[CHILD_ENV_ENV];
  delete process.env[SECRETS_ON_STDIN_ENV];
  if (!policyJson) throw new LauncherError(EX_USAGE, `${POLICY_ENV} is not set`);
  let policy: SandboxPolicy;
  try {
    policy = parseSandboxPolicy(policyJson);
  } catch (err) {
    throw new LauncherError(EX_USAGE, (err as Error).message);
  }
  const extraEnv: Record<string, string> = {};
  if (extraJson) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(extraJson);
    } catch {
      throw new LauncherError(EX_USAGE, `${CHILD_ENV_ENV} is not valid JSON`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new LauncherError(EX_USAGE, `${CHILD_ENV_ENV} must be a JSON object of strings`);
    }
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') throw new LauncherError(EX_USAGE, `${CHILD_ENV_ENV}.${k} must be a string`);
      extraEnv[k] = v;
    }
  }
  return { policy, extraEnv, secretsOnStdin };
}

/** A secrets line is at most this long (50 secrets of 64 KB, with room): more is not ours. */
const MAX_SECRETS_LINE = 4 * 1024 * 1024;

/**
 * The first line on our stdin, when the server hands us the hand's secrets there (never in an
 * environment or a file); what follows it is the command's input, put back for it.
 */
function readFirstLine(stream: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.pause();
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (buf.length > MAX_SECRETS_LINE) {
          done();
          reject(new LauncherError(EX_USAGE, 'the secrets line on stdin is too long'));
        }
        return;
      }
      done();
      const rest = buf.subarray(nl + 1);
      if (rest.length > 0) stream.unshift(rest);
      resolve(buf.subarray(0, nl).toString('utf8'));
    };
    const onEnd = () => {
      done();
      reject(new LauncherError(EX_USAGE, 'stdin ended before the secrets line'));
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
  });
}

async function readSecrets(): Promise<HandSecret[]> {
  try {
    return parseSecretsLine(await readFirstLine(process.stdin));
  } catch (err) {
    if (err instanceof LauncherError) throw err;
    throw new LauncherError(EX_USAGE, (err as Error).message);
  }
}

/**
 * Gives the runtime's proxy the hand's secrets: each under a placeholder of the runtime's own
 * kind (registered in its sentinel registry), with our injection rules (hosts and ports, named
 * headers, body) in place of its substitute-everywhere ones, and every answer the proxy sends back
 * scrubbed of the values (response-scrub.ts). Returns the variables the command gets instead.
 */
function placeSecrets(secrets: HandSecret[]): Record<string, string> {
  if (secrets.length === 0) return {};
  const registry = SandboxManager.getSentinelRegistry();
  // The runtime's copy of the hosts is only for its diagnostics; it matches names, not ports.
  const placed = secrets.map((s) => ({ ...s, placeholder: registry.register(s.name, s.value, s.hosts.map((h) => hostAndPort(h).host)) }));
  const rules = injectionRules(placed);
  registry.substituteInHeaders = rules.substituteInHeaders;
  registry.sentinelsForHost = rules.sentinelsForHost;
  scrubProxyResponses(scrubPairs(placed));
  return {
    ...Object.fromEntries(placed.map((s) => [s.name, s.placeholder])),
    [PASS_ENV_ENV]: placed.map((s) => s.name).join(','),
  };
}

/**
 * The runtime writes its per-hand CA's private key next to the certificate, in our tmp dir, which
 * the hand may read (its trust bundle is there). The proxy holds the key in memory: the file goes.
 * A hand with a uid of its own must still read the certificate: the folder becomes readable.
 */
async function removeCaKeyFile(dir: string): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    if (!name.startsWith('srt-ca-')) continue;
    await fs.rm(path.join(dir, name, 'ca.key'), { force: true });
    if (asRoot()) await fs.chmod(path.join(dir, name), 0o755);
  }
}

/**
 * The runtime gets a socat that dies with this launcher (socat-shim.ts).
 * As root: the hand's writable folders become its own, and the runtime gets a bubblewrap and a
 * seccomp helper that start the command as the hand's uid, with no capability (hand-identity.ts).
 * The shims live in the launcher's runtime dir (root's, read-only inside the sandbox, the shims
 * root's alone), which the hand must read: its CA certificate is there.
 */
async function handTools(policy: SandboxPolicy, tools: Tools, dir: string): Promise<Tools> {
  const socat = path.join(dir, 'socat');
  await fs.writeFile(socat, socatShim(tools.setpriv, tools.socat), { mode: 0o700 });
  if (!asRoot()) return { ...tools, socat, bwrap: await withMounts(policy, tools.bwrap, dir) };
  const id = handIdentity(policy.workspace);
  const writableMounts = (policy.mounts ?? []).filter((m) => !m.readOnly).map((m) => m.source);
  for (const d of [...policy.allowWrite, sandboxHome(policy), ...writableMounts]) await giveToHand(d, id);
  await fs.chmod(dir, 0o755);
  const apply = path.join(runtimeVendorDir(), process.arch === 'arm64' ? 'arm64' : 'x64', 'apply-seccomp');
  if (!existsSync(apply)) throw unavailable(`the sandbox runtime's seccomp helper is missing (${apply})`);
  const bwrap = path.join(dir, 'bwrap');
  const applySeccomp = path.join(dir, 'apply-seccomp');
  await fs.writeFile(bwrap, bwrapShim(tools.bwrap), { mode: 0o700 });
  await fs.writeFile(applySeccomp, applySeccompShim(id, tools.setpriv, apply, sandboxHome(policy)), { mode: 0o700 });
  return { ...tools, socat, bwrap: await withMounts(policy, bwrap, dir), applySeccomp };
}

/** The policy's mounts (mount-binds.ts): a bwrap in front of `bwrap` that adds their binds, or `bwrap` itself without any. */
async function withMounts(policy: SandboxPolicy, bwrap: string, dir: string): Promise<string> {
  const mounts = policy.mounts ?? [];
  if (mounts.length === 0) return bwrap;
  const shim = path.join(dir, 'bwrap-mounts');
  await fs.writeFile(shim, mountsShim(bwrap, mounts), { mode: 0o700 });
  return shim;
}

async function startSandbox(policy: SandboxPolicy, tools: Tools, withSecrets = false): Promise<void> {
  // bubblewrap skips a bind whose source is missing, and the command's cwd must exist.
  await fs.mkdir(policy.workspace, { recursive: true });
  await fs.mkdir(policy.tmpDir, { recursive: true, mode: 0o700 });
  await fs.mkdir(sandboxHome(policy), { recursive: true, mode: 0o700 });
  for (const m of policy.mounts ?? []) await fs.mkdir(m.source, { recursive: true });
  // The runtime makes its sockets and mount sources under os.tmpdir(), which the policy hides.
  runtimeDir = runtimeTmpDir(policy);
  await fs.mkdir(runtimeDir, { recursive: true, mode: 0o700 });
  process.env.TMPDIR = runtimeDir;
  // The runtime protects dotfiles, .git/hooks and .git/config relative to process.cwd() at wrap
  // time (not the child's cwd): we stand in the workspace, or the hand folder above it.
  process.chdir(policy.protectRoot ?? policy.workspace);
  const runtimeTools = await handTools(policy, tools, runtimeDir);
  mark('dirs+shims');
  try {
    await SandboxManager.initialize(runtimeConfig(policy, runtimeTools, runtimeVendorDir(), { terminateTls: withSecrets }), askCallbackFor(policy));
  } catch (err) {
    const message = (err as Error).message;
    if (/dependencies not available/i.test(message)) throw unavailable(message);
    throw new LauncherError(EX_SOFTWARE, `sandbox failed to start: ${message}`);
  }
  // initialize() starts the proxy; a command that connects before it listens would be refused.
  if (!(await SandboxManager.waitForNetworkInitialization())) {
    throw new LauncherError(EX_SOFTWARE, 'sandbox failed to start: its network proxy did not come up');
  }
  if (withSecrets) await removeCaKeyFile(runtimeDir);
  mark('initialize+proxy');
}

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null) =>
  code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);

/** The runtime's tmp dir for this launcher, once made; removed on the way out. */
let runtimeDir: string | undefined;

async function shutdown(code: number): Promise<never> {
  // Stops the proxy and its socat bridges; bounded, so a stuck bridge cannot keep us alive.
  await Promise.race([SandboxManager.reset().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]);
  if (runtimeDir) await fs.rm(runtimeDir, { recursive: true, force: true }).catch(() => undefined);
  process.exit(code);
}

/** The sandboxed command, once started; signals that arrive before then end the launcher. */
let child: ChildProcess | undefined;
let killTimer: NodeJS.Timeout | undefined;

function terminate(signal: NodeJS.Signals): void {
  if (!child) {
    void shutdown(128 + (os.constants.signals[signal] ?? 0));
    return;
  }
  child.kill(signal);
  const c = child;
  killTimer ??= setTimeout(() => c.kill('SIGKILL'), KILL_GRACE_MS);
}

/** Runs `argv` in the sandbox with our stdio; resolves with the exit code to use. */
async function run(policy: SandboxPolicy, extraEnv: Record<string, string>, argv: string[]): Promise<number> {
  // A fixed commandId keeps the command text out of the proxy username (the default key).
  const wrapped = await SandboxManager.wrapWithSandbox(innerCommand(policy, argv), undefined, undefined, undefined, {
    commandId: 'paddock-hand',
  });
  mark('wrap');
  const group = await handCgroup(policy);
  mark('cgroup');
  // The shell joins the group before it becomes bubblewrap: nothing of the hand starts outside it.
  const join = (group?.procsFiles ?? []).map((f) => `echo $$ > ${quote(f)} || exit 70; `).join('');
  const script = join ? `${join}exec /bin/bash -c ${quote(wrapped)}` : wrapped;
  const c = spawn('/bin/bash', ['-c', script], {
    cwd: policy.workspace,
    env: childEnv(policy, extraEnv),
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  child = c;
  mark('spawn');

  // Our stdin closing means whoever started us is gone or done: pass the EOF on, then make sure.
  c.stdin.on('error', () => undefined); // EPIPE once the command has exited
  process.stdin.pipe(c.stdin);
  process.stdin.once('end', () => setTimeout(() => terminate('SIGTERM'), STDIN_EOF_GRACE_MS).unref());

  return new Promise<number>((resolve, reject) => {
    c.once('error', (err) => reject(new LauncherError(EX_SOFTWARE, `cannot start the sandbox: ${err.message}`)));
    c.once('exit', (code, signal) => {
      clearTimeout(killTimer);
      SandboxManager.cleanupAfterCommand();
      void (group?.remove() ?? Promise.resolve()).finally(() => resolve(exitCodeOf(code, signal)));
    });
  });
}

/** `--check`: dependencies, then a real run of `true`, since a kernel may still refuse namespaces. */
async function check(tools: Tools): Promise<number> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'paddock-sandbox-check-'));
  try {
    const policy: SandboxPolicy = {
      workspace: dir,
      tmpDir: dir,
      allowWrite: [dir],
      denyRead: [],
      allowRead: [],
      allowedDomains: [],
      network: 'limited',
      limits: NO_LIMITS,
    };
    await startSandbox(policy, tools);
    const wrapped = await SandboxManager.wrapWithSandbox('true');
    const child = spawn('/bin/bash', ['-c', wrapped], { cwd: dir, env: childEnv(policy, {}), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number>((resolve) => {
      child.once('error', () => resolve(127));
      child.once('exit', (c, s) => resolve(exitCodeOf(c, s)));
    });
    if (code !== 0) throw unavailable(`bubblewrap cannot create a sandbox here (exit ${code}): ${stderr.trim()}`);
    return 0;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<never> {
  const args = process.argv.slice(2);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, () => terminate(signal));
  // A terminal's Ctrl-C reaches every process of its foreground group, hands included. Stopping a
  // hand is the server's call (on its own SIGINT it suspends idle hands, keeping their files), and
  // a server that dies closes our stdin: so a hand ignores SIGINT, and only the check obeys it.
  process.on('SIGINT', () => {
    if (args[0] === '--check') terminate('SIGINT');
  });
  try {
    if (args[0] === '--check') {
      const tools = await checkDependencies();
      return await shutdown(await check(tools));
    }
    const { policy, extraEnv, secretsOnStdin } = readInputs();
    const dashdash = args.indexOf('--');
    const argv = dashdash >= 0 ? args.slice(dashdash + 1) : args;
    if (argv.length === 0) throw new LauncherError(EX_USAGE, 'usage: sandbox-launcher -- <command> [args…]');
    const secrets = secretsOnStdin ? await readSecrets() : [];
    mark('inputs');
    const tools = await checkDependencies();
    mark('checks');
    await startSandbox(policy, tools, secrets.length > 0);
    return await shutdown(await run(policy, { ...extraEnv, ...placeSecrets(secrets) }, argv));
  } catch (err) {
    const code = err instanceof LauncherError ? err.exitCode : EX_SOFTWARE;
    process.stderr.write(`sandbox-launcher: ${(err as Error).message}\n`);
    return shutdown(code);
  }
}

await main();
