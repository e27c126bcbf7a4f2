import { type ChildProcess, spawn } from 'node:child_process';
import { AUTH_ENV, PROGRAM_HEADERS } from '~/e2e/auth';

/** A `next start` this spec owns, so it can kill (SIGKILL) and restart it at will. */
export class OwnServer {
  private child: ChildProcess | null = null;
  /** What the server printed on stdout (the sign-in URL among it), newest last. */
  readonly stdout: string[] = [];
  /** Everything it wrote to stdout and stderr (its log), kept whole when `captureLog` is on. */
  readonly log: string[] = [];

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
    /** What start() waits for: a 2xx on this path (the default needs the session store). */
    private readonly readyPath = '/api/trpc/sessions.brain',
    private readonly opts: { captureLog?: boolean } = {},
  ) {}

  /** The server process (its hands run under it), while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // A leftover server on the port would answer the readiness check in place of ours.
    if (await this.answers()) throw new Error(`port ${this.port} is already served by another process (a leftover server?)`);
    const child = spawn(process.execPath, ['node_modules/next/dist/bin/next', 'start', '-p', String(this.port)], {
      detached: true,
      stdio: ['ignore', 'pipe', this.opts.captureLog ? 'pipe' : 'ignore'],
      // PADDOCK_OUTBOUND_ALLOW: the specs' MCP servers and git hosts run on loopback.
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', PADDOCK_LOG_LEVEL: 'warn', PADDOCK_OUTBOUND_ALLOW: '127.0.0.1,localhost,[::1]', ...AUTH_ENV, ...this.env },
    });
    this.child = child;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout.push(...chunk.split('\n').filter((l) => l.trim() !== ''));
      this.stdout.splice(0, Math.max(0, this.stdout.length - 500));
      if (this.opts.captureLog) this.log.push(chunk);
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.log.push(chunk));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (exited(child)) throw new Error(`next start on ${this.port} exited during start-up (code ${child.exitCode}, signal ${child.signalCode})`);
      if (await this.answers()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`next start on ${this.port} did not come up`);
  }

  private async answers(): Promise<boolean> {
    try {
      return (await fetch(`${this.url}${this.readyPath}`, { headers: PROGRAM_HEADERS })).ok;
    } catch {
      return false;
    }
  }

  /**
   * A graceful stop, as Ctrl-C or a service manager asks for one: `signal` to the server process
   * alone. Resolves with how long it took to exit, or rejects if it has not within `withinMs`.
   */
  async stop(signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM', withinMs = 10_000): Promise<number> {
    const child = this.child;
    if (!child?.pid || exited(child)) throw new Error('the server is not running');
    const t0 = Date.now();
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const inTime = await Promise.race([gone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), withinMs))]);
    if (!inTime) {
      await this.kill();
      throw new Error(`the server did not exit within ${withinMs} ms of ${signal}`);
    }
    this.child = null;
    // What it left behind in its group (hands it started) is gone with it.
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // nothing left
    }
    return Date.now() - t0;
  }

  /** SIGKILL to the whole process group: no graceful shutdown, like a crash. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child?.pid) return;
    // The group may outlive its leader (next start's own children): kill it either way, but wait
    // for an exit event only if one is still to come.
    const gone = exited(child) ? Promise.resolve() : new Promise((r) => child.once('exit', r));
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await gone;
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
