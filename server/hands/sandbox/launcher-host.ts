/**
 * `sandbox-launcher --host`: one launcher for every hand with one network policy (host-wire.ts
 * says the wire). The runtime's checks, its initialize and its network proxy (with the socat
 * bridges to it) happen once here, not once per hand; each hand is then a wrap and a bubblewrap.
 *
 * Isolation is each hand's own, as with a launcher per hand: before its wrap the launcher stands in
 * the hand's folder (the runtime masks dotfiles and hooks relative to its cwd) and installs the
 * hand's whole policy (its binds, denies, and as root its own uid's seccomp shim) as the runtime's
 * configuration, one wrap at a time; its cgroup, rlimits and environment are its own. What the
 * hands share is only what a policy's hands had alike: the proxy and its allowlist. Hands with
 * secrets are not served here (their proxy holds the values and terminates TLS): they keep a
 * launcher each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { GROUP_PREFIX } from '~/server/hands/sandbox/cgroup';
import { MAX_REQUEST_LINE, NETWORK_ENV, type HostRequest, networkKey, parseHostRequest, parseNetwork } from '~/server/hands/sandbox/host-wire';
import {
  type Tools,
  cgroupScript,
  checkedTools,
  childEnv,
  exitCodeOf,
  handCgroup,
  handIdentityTools,
  innerCommand,
  launcherTools,
  makeHandDirs,
  mark,
  runtimeVendorDir,
  socatIn,
} from '~/server/hands/sandbox/launch-steps';
import { serveNativeHand } from '~/server/hands/sandbox/native-hand';
import { NO_LIMITS, TOOLS_ENV, runtimeTmpDir, sandboxHome, type SandboxPolicy } from '~/server/hands/sandbox/policy';
import { askCallbackFor, runtimeConfig } from '~/server/hands/sandbox/runtime-config';

/** After SIGTERM, this long before SIGKILL. */
const KILL_GRACE_MS = 3_000;

interface Live {
  child: ChildProcess;
  killTimer?: NodeJS.Timeout;
  exited: Promise<void>;
}

const hands = new Map<string, Live>();
let seq = 0;
let dirs: string[] = [];
let stopping = false;
/** Where the runtime's proxy bridges listen (set once started). */
let bridgesDir = '';

const say = (line: string) => process.stdout.write(`${line}\n`);

/** One wrap at a time: each stands in its own hand's folder under its own hand's configuration. */
let wrapQueue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const next = wrapQueue.then(fn, fn);
  wrapQueue = next.catch(() => undefined);
  return next;
}

function kill(id: string): void {
  const h = hands.get(id);
  if (!h) return;
  h.child.kill('SIGTERM');
  h.killTimer ??= setTimeout(() => h.child.kill('SIGKILL'), KILL_GRACE_MS);
}

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const id of hands.keys()) kill(id);
    await Promise.race([Promise.all([...hands.values()].map((h) => h.exited)), new Promise((r) => setTimeout(r, KILL_GRACE_MS + 500))]);
    // Stops the proxy and its socat bridges; bounded, so a stuck bridge cannot keep us alive.
    await Promise.race([SandboxManager.reset().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]);
    await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }).catch(() => undefined)));
  }
  process.exit(code);
}

/** The first line of a connection (the request); nothing follows it until we answer. */
function firstLine(conn: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl < 0 && buf.length <= MAX_REQUEST_LINE) return;
      conn.off('data', onData);
      conn.off('end', onEnd);
      conn.pause();
      if (nl < 0) reject(new Error('the hand request is too long'));
      else if (nl !== buf.length - 1) reject(new Error('the hand request must be alone on its line until the answer'));
      else resolve(buf.subarray(0, nl).toString('utf8'));
    };
    const onEnd = () => reject(new Error('the connection ended before the hand request'));
    conn.on('data', onData);
    conn.once('end', onEnd);
  });
}

async function startHand(req: HostRequest, conn: net.Socket, found: Tools, shared: Tools, network: string): Promise<void> {
  const { id, policy, argv, env } = req;
  if (hands.has(id)) throw new Error(`a hand ${id} is already running here`);
  if (networkKey(policy) !== network) throw new Error('this hand has another network policy than this launcher');
  await makeHandDirs(policy);
  const dir = runtimeTmpDir(policy);
  const tools = await handIdentityTools(policy, { ...shared, socat: await socatIn(found, dir) }, dir);
  const wrapped = await oneAtATime(async () => {
    process.chdir(policy.protectRoot ?? policy.workspace);
    // The runtime makes ~/.npm/_logs and ~/.claude/debug writable: the hand's own home, as a launcher of its own had.
    process.env.HOME = sandboxHome(policy);
    // The proxy's bridge sockets are bound in by the runtime, then hidden by the tmpfs over the OS
    // tmp dir: their folder comes back read-only, as a launcher's own runtime dir did.
    SandboxManager.updateConfig(runtimeConfig({ ...policy, allowRead: [...policy.allowRead, bridgesDir] }, tools, runtimeVendorDir()));
    // A fixed commandId keeps the command text out of the proxy username (the default key).
    return SandboxManager.wrapWithSandbox(innerCommand(policy, argv), undefined, undefined, undefined, { commandId: 'paddock-hand' });
  });
  mark(`wrap ${id}`);
  const group = await handCgroup(`${GROUP_PREFIX}${process.pid}-${++seq}`, policy);
  const native = req.serve;
  if (!native) {
    // The answer, the spawn and closing our copy happen in one turn of the loop: no byte the server
    // sends after reading `ok` can be read here instead of by the hand. (3 bytes on a fresh socket
    // go to the kernel at once.)
    conn.write('ok\n');
    if (conn.writableLength > 0) throw new Error('could not answer the hand request');
  }
  // The connection itself is the hand's stdin and stdout (no relay through this process), or, with
  // the native executor, we serve it and the executor is on pipes of ours (native-hand.ts).
  const child = spawn('/bin/bash', ['-c', cgroupScript(wrapped, group)], {
    cwd: policy.workspace,
    env: childEnv(policy, env),
    stdio: native ? ['pipe', 'pipe', 'pipe'] : [conn, conn, 'pipe'],
  });
  if (!native) conn.destroy(); // the child has its own copy; ours would keep the hand's stdout open
  mark(`spawn ${id}`);
  const exited = new Promise<void>((resolve) => {
    const done = (code: number) => {
      const h = hands.get(id);
      clearTimeout(h?.killTimer);
      hands.delete(id);
      SandboxManager.cleanupAfterCommand();
      void (group?.remove() ?? Promise.resolve()).finally(() => {
        if (!stopping) say(`exit ${id} ${code}`);
        resolve();
      });
    };
    child.once('error', () => done(127));
    child.once('exit', (code, signal) => done(exitCodeOf(code, signal)));
  });
  child.stderr?.on('data', (d: Buffer) => say(`err ${id} ${JSON.stringify(d.toString('utf8'))}`));
  hands.set(id, { child, exited });
  if (native) {
    await serveNativeHand(conn, child, native).catch((e: unknown) => {
      kill(id);
      throw e;
    });
    mark(`hello ${id}`);
  }
}

function serve(found: Tools, shared: Tools, network: string) {
  return (conn: net.Socket) => {
    conn.on('error', () => undefined);
    void firstLine(conn)
      .then(async (line) => startHand(parseHostRequest(line), conn, found, shared, network))
      .catch((e: unknown) => {
        if (!conn.destroyed) conn.end(`error ${(e as Error).message.replaceAll('\n', ' ')}\n`);
      });
  };
}

/** The folders of shared launchers that were killed outright (they cannot remove their own). */
async function sweepStaleDirs(): Promise<void> {
  for (const name of await fs.readdir(os.tmpdir()).catch(() => [] as string[])) {
    const pid = /^paddock-launcher-(?:ctl-)?(\d+)-/.exec(name)?.[1];
    if (!pid || Number(pid) === process.pid) continue;
    const alive = await fs.access(`/proc/${pid}`).then(
      () => true,
      () => false,
    );
    if (!alive) await fs.rm(path.join(os.tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
  }
}

export async function runHost(): Promise<never> {
  // The server's SIGINT is the server's to act on (it suspends idle hands); a server that dies closes our stdin.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(128 + (os.constants.signals[signal] ?? 0)));
  try {
    const net0 = parseNetwork(process.env[NETWORK_ENV]);
    delete process.env[NETWORK_ENV];
    const tools = await checkedTools(process.env[TOOLS_ENV]);
    delete process.env[TOOLS_ENV];
    mark('checks');
    // The runtime makes its sockets and mount sources under os.tmpdir(), which every policy hides.
    await sweepStaleDirs();
    const runtimeDir = await fs.mkdtemp(path.join(os.tmpdir(), `paddock-launcher-${process.pid}-`));
    const controlDir = await fs.mkdtemp(path.join(os.tmpdir(), `paddock-launcher-ctl-${process.pid}-`));
    dirs = [runtimeDir, controlDir];
    process.env.TMPDIR = runtimeDir;
    process.chdir(runtimeDir);
    const shared = await launcherTools(tools, runtimeDir);
    // The proxy's sockets in a folder of their own: the one thing here every hand reads.
    bridgesDir = path.join(runtimeDir, 'bridges');
    await fs.mkdir(bridgesDir, { mode: 0o755 });
    process.env.TMPDIR = bridgesDir;
    const base: SandboxPolicy = { workspace: runtimeDir, tmpDir: runtimeDir, allowWrite: [], denyRead: [], allowRead: [], ...net0, limits: NO_LIMITS };
    await SandboxManager.initialize(runtimeConfig(base, shared, runtimeVendorDir()), askCallbackFor(base));
    if (!(await SandboxManager.waitForNetworkInitialization())) throw new Error('its network proxy did not come up');
    process.env.TMPDIR = runtimeDir;
    mark('initialize+proxy');
    const socket = path.join(controlDir, 'hands.sock');
    const server = net.createServer(serve(tools, shared, networkKey(net0)));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
    say(`ready ${socket}`);
  } catch (e) {
    process.stderr.write(`sandbox-launcher: the shared launcher failed to start: ${(e as Error).message}\n`);
    return stop(70);
  }
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const [verb, id] = line.split(' ');
    if (verb === 'kill' && id) kill(id);
  });
  lines.once('close', () => void stop(0));
  return new Promise<never>(() => undefined);
}
