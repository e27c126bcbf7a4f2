import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER = path.join(root, 'server/harness/testing/chaos-worker.ts');

/**
 * A Paddock server process without Next (chaos-worker.ts) that a test can SIGKILL and start again:
 * the chaos test and the hands-outlive-brains test crash it mid-step.
 */
/** The worker process, in its own process group so one SIGKILL takes everything it started. */
export class WorkerProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private killing = false;
  readonly unexpectedExits: string[] = [];
  starts = 0;

  /** The running process's pid (the harness's lease owner names it), or null. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly logFile: string,
  ) {}

  /** Starts a worker; resolves once it reports ready, or rejects after `timeoutMs`. */
  start(): { ready: Promise<void> } {
    const log = fs.openSync(this.logFile, 'a');
    const child = spawn(process.execPath, ['--conditions=react-server', '--import', 'tsx', WORKER], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', log],
      env: this.env,
    });
    fs.closeSync(log);
    this.child = child;
    this.killing = false;
    this.starts++;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!this.killing) this.unexpectedExits.push(`worker ${child.pid} exited by itself (code ${code}, signal ${signal})`);
        resolve();
      }),
    );
    const ready = new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      const timer = setTimeout(() => reject(new Error(`chaos worker ${child.pid} not ready within 30 s; see ${this.logFile}`)), 30_000);
      lines.on('line', (line) => {
        if (!line.startsWith('chaos-worker ready')) return;
        clearTimeout(timer);
        resolve();
      });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error('chaos worker exited before it was ready'));
      });
    });
    // A kill before ready is part of the chaos: nobody else awaits this promise then.
    ready.catch(() => undefined);
    return { ready };
  }

  /** SIGKILL to the whole process group: no graceful shutdown, like a crash or an OOM kill. */
  async kill(): Promise<void> {
    await this.signal(true);
  }

  /** SIGKILL to the server process alone, as the OOM killer does: what it started must end by itself. */
  async killAlone(): Promise<void> {
    await this.signal(false);
  }

  private async signal(group: boolean): Promise<void> {
    const pid = this.child?.pid;
    if (!pid) return;
    this.killing = true;
    try {
      process.kill(group ? -pid : pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.exited;
    this.child = null;
  }
}
