import 'client-only';
import { ToolError } from '~/lib/hand';
import type { WorkerOp, WorkerReply, WorkerRequest, WorkerValue } from '~/lib/browser/engine/offline/protocol';
import type { BrowserEngine, EngineExecuteOptions, EngineMounts, EngineTool, MountChanges, StartEngineOptions } from '~/lib/browser/engine/types';
import { Listeners } from '~/lib/browser/engine/listeners';

/**
 * The offline engine, page side: a Web Worker running just-bash + a QuickJS `node` (see
 * shell.worker.ts), reached by messages. A watchdog replaces the worker when it stops
 * answering (a bug or a pathological command blocking its thread): the in-flight calls fail with
 * a clear error and the new worker reloads the workspace from IndexedDB.
 */

export interface OfflineEngineTimings {
  /** Worker created → shell ready (chunk load, just-bash, workspace restore). */
  workerReadyMs: number;
  restoreMs: number;
  restoredFiles: number;
}

export interface OfflineEngine extends BrowserEngine {
  readonly kind: 'offline';
  /** Of the current worker. */
  readonly timings: OfflineEngineTimings;
  /** How many times the watchdog replaced the worker. */
  readonly restarts: number;
  /** Test hook: blocks the worker's thread for `ms`, as a runaway command would. */
  simulateHang(ms: number): void;
}

export const DEFAULT_NODE_TIME_LIMIT_MS = 5000;
export const DEFAULT_NODE_MEMORY_LIMIT_BYTES = 64 * 1024 * 1024;

/** A call may run this much past its own limit before the worker is checked. */
const GRACE_MS = 2000;
/** File operations have no limit of their own: this is theirs. */
const FILE_OP_LIMIT_MS = 10_000;
/** A call not started after this long, with nothing else running, means a stuck worker. */
const START_GRACE_MS = 2000;
const PONG_TIMEOUT_MS = 2000;
const BOOT_TIMEOUT_MS = 30_000;
export const RESTART_MESSAGE = 'the shell stopped answering and was restarted';

const MUTATING: ReadonlySet<WorkerOp> = new Set<WorkerOp>(['bash', 'write', 'edit', 'writeFile']);

interface Pending {
  op: WorkerOp;
  resolve(value: WorkerValue): void;
  reject(e: Error): void;
  onOutput?: (chunk: string) => void;
  limitMs: number;
  started: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

export async function startOfflineEngine(opts: StartEngineOptions & { reason?: string }): Promise<OfflineEngine> {
  const engine = new WorkerEngine(opts, opts.reason ?? 'offline engine: chosen');
  await engine.boot();
  return engine;
}

class WorkerEngine implements OfflineEngine {
  readonly kind = 'offline' as const;
  timings: OfflineEngineTimings = { workerReadyMs: 0, restoreMs: 0, restoredFiles: 0 };
  restarts = 0;
  private worker: Worker | null = null;
  private ready: Promise<void> = Promise.resolve();
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly pings = new Map<number, () => void>();
  private readonly changed = new Listeners();
  private disposed = false;
  private persistError: string | undefined;
  private readonly timeLimitMs: number;
  private readonly memoryLimitBytes: number;

  constructor(
    private readonly opts: StartEngineOptions,
    private readonly why: string,
  ) {
    this.timeLimitMs = opts.nodeTimeLimitMs ?? DEFAULT_NODE_TIME_LIMIT_MS;
    this.memoryLimitBytes = opts.nodeMemoryLimitBytes ?? DEFAULT_NODE_MEMORY_LIMIT_BYTES;
  }

  get reason(): string {
    return this.persistError === undefined ? this.why : `${this.why}; the workspace is not saved (${this.persistError})`;
  }

  boot(): Promise<void> {
    this.ready = this.spawn();
    return this.ready;
  }

  /** Starts a worker and waits until its shell is ready (workspace restored). */
  private spawn(): Promise<void> {
    const t0 = performance.now();
    // The one relative reference: Turbopack bundles the worker from this URL.
    const worker = new Worker(new URL('./shell.worker.ts', import.meta.url), { type: 'module' });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      const fail = (message: string) => {
        clearTimeout(timeout);
        if (this.worker === worker) {
          worker.terminate();
          this.worker = null;
        }
        reject(new Error(`offline engine: ${message}`));
      };
      const timeout = setTimeout(() => fail(`the shell worker did not start within ${BOOT_TIMEOUT_MS / 1000} s`), BOOT_TIMEOUT_MS);
      worker.addEventListener('error', (e) => {
        if (this.worker === worker && this.timings.workerReadyMs === 0) fail(`the shell worker failed to load: ${e.message || 'error'}`);
      });
      worker.addEventListener('message', (e: MessageEvent<WorkerReply>) => {
        if (this.worker !== worker) return; // a replaced worker's late messages
        const msg = e.data;
        if (msg.type === 'ready') {
          clearTimeout(timeout);
          this.timings = { workerReadyMs: Math.round(performance.now() - t0), restoreMs: Math.round(msg.timings.restoreMs), restoredFiles: msg.restoredFiles };
          this.persistError = msg.persistError;
          resolve();
        } else if (msg.type === 'init-error') fail(msg.message);
        else this.onReply(msg);
      });
      const init: WorkerRequest = {
        type: 'init',
        sessionId: this.opts.sessionId,
        nodeTimeLimitMs: this.timeLimitMs,
        nodeMemoryLimitBytes: this.memoryLimitBytes,
      };
      worker.postMessage(init);
    });
  }

  private onReply(msg: WorkerReply): void {
    switch (msg.type) {
      case 'pong':
        this.pings.get(msg.id)?.();
        return;
      case 'started': {
        const p = this.pending.get(msg.id);
        if (!p) return;
        p.started = true;
        clearTimeout(p.timer);
        p.timer = setTimeout(() => this.overdue(msg.id), p.limitMs + GRACE_MS);
        return;
      }
      case 'output':
        this.pending.get(msg.id)?.onOutput?.(msg.chunk);
        return;
      case 'result':
      case 'error': {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.type === 'result') p.resolve(msg.value);
        else p.reject(new ToolError(msg.message));
        return;
      }
      default:
        return;
    }
  }

  private post(msg: WorkerRequest): void {
    this.worker?.postMessage(msg);
  }

  private async call(op: WorkerOp, input: Record<string, unknown>, opts: { signal?: AbortSignal; onOutput?: (c: string) => void }): Promise<WorkerValue> {
    if (this.disposed) throw new ToolError('the offline engine was stopped');
    await this.ready;
    if (opts.signal?.aborted) throw new ToolError(`${op}: cancelled before it started`);
    const id = this.nextId++;
    const limitMs = op === 'bash' && typeof input.timeout_ms === 'number' && input.timeout_ms > 0 ? input.timeout_ms : op === 'bash' ? 120_000 : FILE_OP_LIMIT_MS;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.post({ type: 'abort', id });
      const done = () => opts.signal?.removeEventListener('abort', onAbort);
      const p: Pending = {
        op,
        limitMs,
        started: false,
        onOutput: opts.onOutput,
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      p.timer = setTimeout(() => this.notStarted(id), START_GRACE_MS);
      this.pending.set(id, p);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.post({ type: 'call', id, op, input });
    });
  }

  // ── watchdog ─────────────────────────────────────────────────────────────

  /** A call has not started: fine while another call runs (it is queued), suspicious otherwise. */
  private notStarted(id: number): void {
    const p = this.pending.get(id);
    if (!p || p.started) return;
    const othersRunning = [...this.pending.values()].some((q) => q !== p && q.started);
    if (othersRunning) {
      p.timer = setTimeout(() => this.notStarted(id), START_GRACE_MS);
      return;
    }
    void this.probe().then((alive) => {
      if (alive && this.pending.get(id) === p && !p.started) p.timer = setTimeout(() => this.notStarted(id), START_GRACE_MS);
    });
  }

  /** A call ran past its limit + grace: a live worker gets it cancelled; a silent one is replaced. */
  private overdue(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    void this.probe().then((alive) => {
      if (!alive || this.pending.get(id) !== p) return;
      this.pending.delete(id);
      this.post({ type: 'abort', id });
      p.reject(new ToolError(`${p.op}: no result ${p.limitMs + GRACE_MS} ms after it started; it was cancelled`));
    });
  }

  /** Pings the worker; restarts it when it does not answer. Resolves to whether it was alive. */
  private probe(): Promise<boolean> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(false);
    const id = this.nextId++;
    // A running `node` blocks the worker up to its time limit: wait that long for a pong.
    const bashRunning = [...this.pending.values()].some((p) => p.started && p.op === 'bash');
    const wait = bashRunning ? Math.max(PONG_TIMEOUT_MS, this.timeLimitMs + 1000) : PONG_TIMEOUT_MS;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pings.delete(id);
        if (this.worker === worker) this.restart(RESTART_MESSAGE);
        resolve(false);
      }, wait);
      this.pings.set(id, () => {
        clearTimeout(timer);
        this.pings.delete(id);
        resolve(true);
      });
      this.post({ type: 'ping', id });
    });
  }

  private restart(message: string): void {
    this.restarts++;
    this.worker?.terminate();
    this.worker = null;
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const p of failed) {
      clearTimeout(p.timer);
      p.reject(new ToolError(message));
    }
    this.ready = this.spawn();
    void this.ready.then(
      () => this.changed.emit(),
      () => undefined,
    );
  }

  // ── BrowserEngine ────────────────────────────────────────────────────────

  async execute(tool: EngineTool, input: Record<string, unknown>, opts: EngineExecuteOptions): Promise<string> {
    try {
      const value = await this.call(tool, input, { signal: opts.signal, onOutput: opts.onOutput });
      return textOf(value);
    } finally {
      if (MUTATING.has(tool)) this.changed.emit();
    }
  }

  async listFiles(): Promise<string[]> {
    const value = await this.call('listFiles', {}, {});
    return Array.isArray(value) ? value : [];
  }

  async readFile(path: string): Promise<string> {
    return textOf(await this.call('readFile', { path }, {}));
  }

  async writeFile(path: string, content: string): Promise<void> {
    try {
      await this.call('writeFile', { file_path: path, content }, {});
    } finally {
      this.changed.emit();
    }
  }

  /** The session's mounts, under /mnt in the worker's filesystem (shell-mounts.ts). */
  readonly mounts: EngineMounts = {
    plan: async (mounts) => {
      const value = await this.call('mountsPlan', { mounts }, {});
      return Array.isArray(value) ? value : [];
    },
    place: async (mount, bytes) => {
      await this.call('mountsPlace', { mount, bytes }, {});
    },
    changes: async () => {
      const value = await this.call('mountsChanges', {}, {});
      return typeof value === 'object' && !Array.isArray(value) ? value : ({ outputs: [], memory: [], skipped: [] } satisfies MountChanges);
    },
  };

  onFilesChanged(cb: () => void): () => void {
    return this.changed.add(cb);
  }

  onPreview(): () => void {
    // No dev servers offline: nothing ever listens on a port here.
    return () => undefined;
  }

  simulateHang(ms: number): void {
    this.post({ type: 'hang', ms });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.worker?.terminate();
    this.worker = null;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new ToolError('the offline engine was stopped'));
    }
    this.pending.clear();
    this.changed.clear();
  }
}

function textOf(value: WorkerValue): string {
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join('\n') : '';
}
