import { type ChildProcess, spawn } from 'node:child_process';

/** A `next start` this spec owns, so it can kill (SIGKILL) and restart it at will. */
export class OwnServer {
  private child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(process.execPath, ['node_modules/next/dist/bin/next', 'start', '-p', String(this.port)], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', PADDOCK_LOG_LEVEL: 'warn', ...this.env },
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${this.url}/api/trpc/sessions.brain`)).ok) return;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`next start on ${this.port} did not come up`);
  }

  /** SIGKILL to the whole process group: no graceful shutdown, like a crash. */
  async kill(): Promise<void> {
    const pid = this.child?.pid;
    if (!pid) return;
    const exited = new Promise((r) => this.child?.once('exit', r));
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
    this.child = null;
  }
}
