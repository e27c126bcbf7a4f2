/**
 * The sandbox launcher. Two modes:
 *
 * - one hand per process: it reads the hand's policy from PADDOCK_SANDBOX_POLICY, starts
 *   sandbox-runtime's network proxy for that policy, and runs `argv after --` inside bubblewrap
 *   with stdin/stdout/stderr passed through, so an MCP stdio server can run over it. It exits
 *   with the command's code. Hands with secrets use it (their proxy holds the values);
 * - `--host`: one process per network policy, serving every hand with that policy
 *   (launcher-host.ts, the wire in host-wire.ts): the checks, the runtime's initialize and the
 *   proxy once, each hand a wrap and a bubblewrap.
 *
 *   node bin/sandbox-launcher.mjs -- <command> [args…]
 *   node bin/sandbox-launcher.mjs --host       (PADDOCK_SANDBOX_NETWORK: the hands' network)
 *   node bin/sandbox-launcher.mjs --check      (exit 0, or 69 with "sandbox unavailable: …")
 *
 * No spawnSync/execSync here once the proxy runs: it lives on this event loop, and a blocked loop
 * would hang every network call from inside the sandbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { GROUP_PREFIX } from '~/server/hands/sandbox/cgroup';
import { type HandSecret, PASS_ENV_ENV, SECRETS_ON_STDIN_ENV, parseSecretsLine } from '~/server/hands/sandbox/hand-secret';
import {
  EX_SOFTWARE,
  EX_USAGE,
  LauncherError,
  type Tools,
  asRoot,
  cgroupScript,
  checkDependencies,
  checkedTools,
  childEnv,
  exitCodeOf,
  handCgroup,
  handIdentityTools,
  innerCommand,
  launcherTools,
  makeHandDirs,
  mark,
  parseExtraEnv,
  runtimeVendorDir,
  unavailable,
} from '~/server/hands/sandbox/launch-steps';
import { runHost } from '~/server/hands/sandbox/launcher-host';
import { scrubPairs, scrubProxyResponses } from '~/server/hands/sandbox/response-scrub';
import { hostAndPort, injectionRules } from '~/server/hands/sandbox/secret-injection';
import { askCallbackFor, runtimeConfig } from '~/server/hands/sandbox/runtime-config';
import { CHILD_ENV_ENV, NO_LIMITS, POLICY_ENV, TOOLS_ENV, parseSandboxPolicy, runtimeTmpDir, type SandboxPolicy } from '~/server/hands/sandbox/policy';

/** After our stdin closes, the command gets this long to finish on its own before SIGTERM. */
const STDIN_EOF_GRACE_MS = 2_000;
/** After SIGTERM, this long before SIGKILL. */
const KILL_GRACE_MS = 3_000;

mark('boot+load');

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
  const extraEnv = parseExtraEnv(extraJson, CHILD_ENV_ENV);
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

/** The shims (launch-steps.ts) in this launcher's runtime dir, which the hand must read: its CA certificate is there. */
async function handTools(policy: SandboxPolicy, tools: Tools, dir: string): Promise<Tools> {
  return handIdentityTools(policy, await launcherTools(tools, dir), dir);
}

async function startSandbox(policy: SandboxPolicy, tools: Tools, withSecrets = false): Promise<void> {
  await makeHandDirs(policy);
  // The runtime makes its sockets and mount sources under os.tmpdir(), which the policy hides.
  runtimeDir = runtimeTmpDir(policy);
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
  const group = await handCgroup(`${GROUP_PREFIX}${process.pid}`, policy);
  mark('cgroup');
  const script = cgroupScript(wrapped, group);
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
  if (args[0] === '--host') return runHost();
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
      const code = await check(tools);
      // What was found, for the server to hand every launcher it starts (TOOLS_ENV).
      process.stdout.write(`${JSON.stringify({ bwrap: tools.bwrap, socat: tools.socat, rg: tools.rg, setpriv: tools.setpriv })}\n`);
      return await shutdown(code);
    }
    const { policy, extraEnv, secretsOnStdin } = readInputs();
    const dashdash = args.indexOf('--');
    const argv = dashdash >= 0 ? args.slice(dashdash + 1) : args;
    if (argv.length === 0) throw new LauncherError(EX_USAGE, 'usage: sandbox-launcher -- <command> [args…]');
    const secrets = secretsOnStdin ? await readSecrets() : [];
    mark('inputs');
    const tools = await checkedTools(process.env[TOOLS_ENV]);
    delete process.env[TOOLS_ENV];
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
