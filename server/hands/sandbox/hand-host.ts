import 'server-only';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { type HandNetwork, NETWORK_ENV, networkKey, type ServeNative } from '~/server/hands/sandbox/host-wire';
import { TIMINGS_ENV, TOOLS_ENV, type SandboxPolicy } from '~/server/hands/sandbox/policy';
import { LAUNCHER_NODE_FLAGS, launcherPath } from '~/server/hands/sandbox/spawn-sandboxed';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** A shared launcher that has not said `ready` by then is taken as failed. */
const READY_TIMEOUT_MS = 30_000;

/** One hand on a shared launcher, as the server holds it. */
export interface HostedHand {
  /** The hand's stdin and stdout (the MCP stdio wire). */
  socket: net.Socket;
  /** The hand's stderr, relayed by the launcher. */
  stderr: Readable;
  /** Resolves with the hand's exit code once its launcher says it exited (or the launcher is gone). */
  exited: Promise<number | null>;
  /** SIGTERM to the hand, SIGKILL after the launcher's grace. */
  kill(): void;
}

interface HandState {
  stderr: PassThrough;
  exit: (code: number | null) => void;
}

/**
 * The server's end of one shared launcher (`sandbox-launcher --host`, launcher-host.ts; the wire
 * is host-wire.ts): starts it for one network policy and opens hands on it.
 */
export class HandHost {
  readonly key: string;
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly ready: Promise<string>;
  private readonly hands = new Map<string, HandState>();
  private stderrTail = '';
  private seq = 0;
  /** Resolves once the launcher process has exited. */
  readonly exited: Promise<void>;
  private gone = false;

  constructor(network: HandNetwork, opts: { launcher?: string; hostPath?: string; tools?: string } = {}) {
    this.key = networkKey(network);
    const env: Record<string, string> = {
      PATH: opts.hostPath ?? process.env.PATH ?? DEFAULT_PATH,
      LANG: 'C.UTF-8',
      [NETWORK_ENV]: JSON.stringify({ network: network.network, allowedDomains: network.allowedDomains }),
    };
    // As spawn-sandboxed.ts: the server's upstream proxy and trusted CAs, and the start-up timings when asked.
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'NODE_EXTRA_CA_CERTS', TIMINGS_ENV]) {
      const value = process.env[name];
      if (value) env[name] = value;
    }
    if (opts.tools) env[TOOLS_ENV] = opts.tools;
    if (opts.launcher) env.NODE_COMPILE_CACHE = path.join(path.dirname(opts.launcher), '.compile-cache');
    this.child = spawn(process.execPath, [...LAUNCHER_NODE_FLAGS, opts.launcher ?? launcherPath(), '--host'], {
      env: env as NodeJS.ProcessEnv, // a cast: Next's types make NODE_ENV required; a clean env has none
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // The launcher lives as long as the server wants it, never longer: it ends when our end of its
    // stdin closes. Once ready it keeps no process alive by itself (its hands' sockets do).
    const unref = () => {
      this.child.unref();
      for (const s of [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as net.Socket[]) s.unref?.();
    };
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString()).slice(-2048)));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.once('error', () => resolve());
    });
    let onReady: (socket: string) => void = () => undefined;
    this.ready = new Promise<string>((resolve, reject) => {
      onReady = resolve;
      const timer = setTimeout(() => reject(new Error(`the shared sandbox launcher did not start in ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
      timer.unref();
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`the shared sandbox launcher exited${this.stderrTail ? `: ${this.stderrTail.trim().replace(/^sandbox-launcher: /, '')}` : ''}`));
      });
    });
    this.ready.then(unref, () => undefined);
    void this.exited.then(() => {
      this.gone = true;
      for (const [id, h] of this.hands) this.finish(id, h, null);
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const [verb, id, ...rest] = line.split(' ');
      const h = id === undefined ? undefined : this.hands.get(id);
      if (verb === 'ready' && id) onReady(line.slice('ready '.length));
      else if (verb === 'err' && h) h.stderr.write(String(JSON.parse(rest.join(' '))));
      else if (verb === 'exit' && h && id) this.finish(id, h, Number(rest[0]));
    });
  }

  /** Whether the launcher still serves hands. */
  get alive(): boolean {
    return !this.gone;
  }

  /** Hands open on it now. */
  get size(): number {
    return this.hands.size;
  }

  private finish(id: string, h: HandState, code: number | null): void {
    this.hands.delete(id);
    h.stderr.end();
    h.exit(code);
  }

  /**
   * Starts `argv` in the sandbox for `policy` (its network must be this launcher's); with `serve`,
   * `argv` is the native executor and the launcher serves the MCP wire itself (host-wire.ts).
   */
  async open(policy: SandboxPolicy, argv: string[], env: Record<string, string> = {}, serve?: ServeNative): Promise<HostedHand> {
    if (networkKey(policy) !== this.key) throw new Error('this hand has another network policy than its launcher');
    const socketPath = await this.ready;
    const id = `h${++this.seq}`;
    const stderr = new PassThrough();
    let exit: (code: number | null) => void = () => undefined;
    const exited = new Promise<number | null>((resolve) => (exit = resolve));
    this.hands.set(id, { stderr, exit });
    try {
      const socket = await request(socketPath, JSON.stringify({ id, policy, argv, env, ...(serve ? { serve } : {}) }));
      return { socket, stderr, exited, kill: () => this.send(`kill ${id}`) };
    } catch (e) {
      const h = this.hands.get(id);
      if (h) this.finish(id, h, null);
      throw e;
    }
  }

  private send(line: string): void {
    if (!this.gone) this.child.stdin.write(`${line}\n`);
  }

  /** Ends the launcher: every hand on it ends with it. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}

/** Connects, sends the request line and waits for `ok` (the socket is then the hand's) or `error …`. */
function request(socketPath: string, line: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buf = Buffer.alloc(0);
    const fail = (e: Error) => {
      socket.destroy();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl < 0) return;
      socket.off('data', onData);
      socket.off('error', fail);
      socket.off('close', onClose);
      socket.pause();
      const answer = buf.subarray(0, nl).toString('utf8');
      if (answer !== 'ok') return fail(new Error(answer.replace(/^error /, '')));
      const rest = buf.subarray(nl + 1);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    const onClose = () => fail(new Error('the shared sandbox launcher closed the connection without an answer'));
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('close', onClose);
    socket.once('connect', () => socket.write(`${line}\n`));
  });
}
