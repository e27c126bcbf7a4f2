import 'client-only';
import type { IFileSystem } from 'just-bash/browser';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { BOOTSTRAP_SOURCE, NODE_BUILTINS, type BootstrapConfig } from '~/lib/browser/engine/offline/node/bootstrap';
import { NODE_VERSION } from '~/lib/browser/engine/offline/node/node-cli';
import { Resolver } from '~/lib/browser/engine/offline/node/resolve';
import { metaPrefix, moduleSource, normalizeModule, stripShebang } from '~/lib/browser/engine/offline/node/esm-loader';
import { builtinExportNames, dumpError, formatScriptError, isModuleSource, isProcessExit } from '~/lib/browser/engine/offline/node/quickjs-inspect';
import { installHostFunctions, type NodeHostEnv } from '~/lib/browser/engine/offline/node/node-host';
import { Vfs } from '~/lib/browser/engine/offline/node/vfs';
import { resolvePosix } from '~/lib/posix-path';

/**
 * One `node` process: a fresh QuickJS runtime per run (nothing leaks between runs), the Node
 * bootstrap, the script, then an event loop for timers and child processes. The time limit is
 * enforced twice: QuickJS's interrupt handler stops running JavaScript (`while(true){}`), and
 * the loop stops waiting; the memory limit is QuickJS's allocator limit.
 */

export interface NodeRunOptions {
  fs: IFileSystem;
  cwd: string;
  env: Record<string, string>;
  stdin: Uint8Array;
  timeLimitMs: number;
  memoryLimitBytes: number;
  /** The enclosing bash call's deadline (epoch ms): the run also stops there. */
  outerDeadline?: number;
  signal?: AbortSignal;
  /** Runs a command line in the shell (child_process). */
  exec(command: string, opts: { cwd: string; env: Record<string, string>; stdin: string }): Promise<{ stdout: string; stderr: string; exitCode: number }>;
}

export type NodeEntry =
  | { kind: 'file'; path: string; args: string[]; inputType?: 'module' | 'commonjs' }
  | { kind: 'eval'; code: string; print: boolean; filename: string; args: string[]; inputType?: 'module' | 'commonjs' };

export interface NodeRunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The wasm module hit an unrecoverable state (e.g. the host's stack overflowed): drop it. */
  poisoned: boolean;
}

/**
 * QuickJS's own stack limit. It must stay below what the worker's native stack allows the wasm
 * interpreter, or deep recursion overflows the host stack and aborts the wasm module instead of
 * throwing a catchable error. Measured in Chromium's worker: at 256 KiB the host overflowed at
 * ~810 nested calls; at 128 KiB QuickJS stops first (677 plain calls, ~200 through
 * Array.prototype.map) with `InternalError: stack overflow`.
 */
const MAX_STACK_BYTES = 128 * 1024;
/** Output kept per stream; beyond it the run continues but output is dropped with a notice. */
const MAX_OUTPUT_CHARS = 8 * 1024 * 1024;
/** While JavaScript keeps being runnable, give the worker's message queue a turn this often. */
const YIELD_EVERY_MS = 50;

type StopReason = 'time' | 'outer-time' | 'abort';

const outOfMemory = (limit: number) => `node: script stopped: out of memory (memory limit ${Math.round(limit / (1024 * 1024))} MiB)\n`;

/**
 * The memory limit. QuickJS's own (`setMemoryLimit`) bounds one allocation, not their sum, in an
 * Emscripten build: its allocator reports no usable sizes, so nothing accumulates, and a script
 * could hold gigabytes of the tab. Emscripten grows the heap through this Memory's `grow`; past
 * the limit that now throws, the allocation fails and QuickJS raises its out-of-memory error.
 * The limit counts from the heap's size at the start (what earlier runs freed is reusable on top).
 */
function capHeap(heap: WebAssembly.Memory, limitBytes: number): WebAssembly.Memory {
  const cap = heap.buffer.byteLength + limitBytes;
  Object.defineProperty(heap, 'grow', {
    configurable: true,
    value: (pages: number) => {
      if (heap.buffer.byteLength + pages * 65_536 > cap) throw new RangeError('over the script memory limit');
      return WebAssembly.Memory.prototype.grow.call(heap, pages);
    },
  });
  return heap;
}

function uncapHeap(heap: WebAssembly.Memory): void {
  delete (heap as { grow?: unknown }).grow;
}

interface Timer {
  due: number;
  ref: boolean;
}

export async function runNode(qjs: QuickJSWASMModule, entry: NodeEntry, opts: NodeRunOptions): Promise<NodeRunResult> {
  const run = new NodeRun(qjs, opts, await Vfs.load(opts.fs));
  return run.run(entry);
}

class NodeRun implements NodeHostEnv {
  private readonly started = Date.now();
  private readonly deadline: number;
  readonly resolver: Resolver;
  private readonly rt: QuickJSRuntime;
  private readonly ctx: QuickJSContext;
  private readonly out = { 1: '', 2: '' } as Record<1 | 2, string>;
  private readonly decoders = { 1: new TextDecoder(), 2: new TextDecoder() } as Record<1 | 2, TextDecoder>;
  private truncated = false;
  private exitCode: number | null = null;
  private stop: StopReason | null = null;
  private failure: { code: number; text: string } | null = null;
  private poisoned = false;
  readonly timers = new Map<number, Timer>();
  private readonly runningExecs = new Set<number>();
  private readonly finishedExecs: Array<{ id: number; payload: string }> = [];
  private wake: (() => void) | null = null;
  private internal: QuickJSHandle | null = null;
  private mainPromise: QuickJSHandle | null = null;
  readonly stdin: Uint8Array;
  /** The module's linear memory, capped for this run (see capHeap). */
  private readonly heap: WebAssembly.Memory;

  constructor(
    qjs: QuickJSWASMModule,
    private readonly opts: NodeRunOptions,
    readonly vfs: Vfs,
  ) {
    const own = this.started + opts.timeLimitMs;
    this.deadline = Math.min(own, opts.outerDeadline ?? Infinity);
    this.resolver = new Resolver(vfs);
    this.stdin = opts.stdin;
    this.heap = capHeap(qjs.getWasmMemory(), opts.memoryLimitBytes);
    this.rt = qjs.newRuntime();
    this.rt.setMemoryLimit(opts.memoryLimitBytes);
    this.rt.setMaxStackSize(MAX_STACK_BYTES);
    this.rt.setInterruptHandler(() => this.shouldInterrupt());
    this.rt.setModuleLoader(
      (name) => {
        try {
          return { value: moduleSource(name, this.resolver, (p) => this.readText(p), (id) => builtinExportNames(this.ctx, this.internal, id)) };
        } catch (e) {
          return { error: e instanceof Error ? e : new Error(String(e)) };
        }
      },
      (base, requested) => {
        try {
          return { value: normalizeModule(this.resolver, this.opts.cwd, base, requested) };
        } catch (e) {
          return { error: e instanceof Error ? e : new Error(String(e)) };
        }
      },
    );
    this.ctx = this.rt.newContext();
  }

  private shouldInterrupt(): boolean {
    if (this.exitCode !== null) return true;
    if (this.opts.signal?.aborted) {
      this.stop ??= 'abort';
      return true;
    }
    if (Date.now() > this.deadline) {
      this.stop ??= this.deadline < this.started + this.opts.timeLimitMs ? 'outer-time' : 'time';
      return true;
    }
    return false;
  }

  private get finished(): boolean {
    return this.exitCode !== null || this.stop !== null || this.failure !== null;
  }

  async run(entry: NodeEntry): Promise<NodeRunResult> {
    try {
      this.boot(entry);
      if (!this.finished) this.start(entry);
      if (!this.finished) await this.loop();
      if (!this.finished && this.mainPromise) {
        this.failure = { code: 13, text: `Warning: Detected unsettled top-level await in ${entry.kind === 'file' ? entry.path : '[eval]'}\n` };
      }
      if (this.exitCode === null && this.stop === null && this.failure === null) this.exitCode = this.emitExit(0);
    } catch (e) {
      // An exception on the host side (not in the script): the wasm module may be broken.
      this.poisoned = true;
      this.failure = { code: 70, text: `node: internal error in the offline engine: ${(e as Error).message}\n` };
    }
    try {
      await this.vfs.flushTo(this.opts.fs);
    } catch (e) {
      this.write(2, `node: could not write files back: ${(e as Error).message}\n`);
    }
    this.dispose();
    return this.result();
  }

  private result(): NodeRunResult {
    const flush = (fd: 1 | 2) => this.out[fd] + this.decoders[fd].decode();
    let stderr = flush(2);
    let exitCode = this.exitCode ?? 0;
    if (this.stop === 'time') {
      stderr += `node: script killed after ${this.opts.timeLimitMs} ms (time limit)\n`;
      exitCode = 124;
    } else if (this.stop === 'outer-time') {
      stderr += `node: script stopped: the command's timeout ran out\n`;
      exitCode = 124;
    } else if (this.stop === 'abort') {
      stderr += 'node: script cancelled\n';
      exitCode = 130;
    } else if (this.failure) {
      stderr += this.failure.text;
      exitCode = this.failure.code;
    }
    if (this.truncated) stderr += `node: output over ${MAX_OUTPUT_CHARS} characters was dropped\n`;
    return { stdout: flush(1), stderr, exitCode, poisoned: this.poisoned };
  }

  private dispose(): void {
    try {
      this.mainPromise?.dispose();
      this.internal?.dispose();
      this.ctx.dispose();
      this.rt.dispose();
      uncapHeap(this.heap);
    } catch {
      // QuickJS asserts on leaked objects when a run was cut short: the module is suspect now.
      this.poisoned = true;
    } finally {
      uncapHeap(this.heap);
    }
  }

  // ── setup ────────────────────────────────────────────────────────────────

  private boot(entry: NodeEntry): void {
    const ctx = this.ctx;
    const host = ctx.newObject();
    installHostFunctions(this.ctx, host, this);
    const config: BootstrapConfig = {
      argv: ['/usr/local/bin/node', ...(entry.kind === 'file' ? [entry.path] : []), ...entry.args],
      env: this.opts.env,
      cwd: this.opts.cwd,
      builtins: NODE_BUILTINS,
    };
    const fn = ctx.evalCode(BOOTSTRAP_SOURCE, 'node:internal/bootstrap');
    if (fn.error) {
      host.dispose();
      this.fail(fn.error);
      return;
    }
    const cfg = ctx.evalCode(`(${JSON.stringify(config)})`, 'node:internal/config');
    if (cfg.error) {
      fn.value.dispose();
      host.dispose();
      this.fail(cfg.error);
      return;
    }
    const r = ctx.callFunction(fn.value, ctx.undefined, host, cfg.value);
    fn.value.dispose();
    cfg.value.dispose();
    host.dispose();
    if (r.error) return this.fail(r.error);
    r.value.dispose();
    this.internal = ctx.getProp(ctx.global, '__node_internal__');
  }

  private start(entry: NodeEntry): void {
    if (entry.kind === 'file') {
      const format = this.entryFormat(entry.path, entry.inputType);
      if (format === 'esm') this.startModule(this.readText(entry.path), entry.path);
      else this.callInternal('runMain', [entry.path]);
      return;
    }
    const asModule = entry.inputType === 'module' || (entry.inputType === undefined && isModuleSource(this.ctx, entry.code, entry.filename));
    if (asModule) this.startModule(entry.code, resolvePosix(this.opts.cwd, entry.filename));
    else this.callInternal('runEval', [entry.code, entry.print]);
  }

  /** Format of the main script; an ambiguous .js that fails as CommonJS but parses as a module is one (Node 22). */
  private entryFormat(path: string, inputType: 'module' | 'commonjs' | undefined): 'esm' | 'cjs' {
    const format = this.resolver.format(path);
    if (format === 'esm') return 'esm';
    if (format === 'json' || path.endsWith('.cjs') || inputType === 'commonjs') return 'cjs';
    return isModuleSource(this.ctx, this.readText(path), path) ? 'esm' : 'cjs';
  }

  private startModule(source: string, path: string): void {
    const r = this.ctx.evalCode(metaPrefix(path) + stripShebang(source), path, { type: 'module' });
    if (r.error) return this.fail(r.error);
    this.mainPromise = r.value;
  }

  private readText(path: string): string {
    return new TextDecoder().decode(this.vfs.readFile(path));
  }

  // ── event loop ───────────────────────────────────────────────────────────

  private async loop(): Promise<void> {
    let lastYield = Date.now();
    for (;;) {
      this.drainJobs();
      if (this.finished) return;
      if (this.checkMain()) return;
      const now = Date.now();
      if (now > this.deadline) {
        this.stop = this.deadline < this.started + this.opts.timeLimitMs ? 'outer-time' : 'time';
        return;
      }
      const alive = this.runningExecs.size > 0 || this.finishedExecs.length > 0 || [...this.timers.values()].some((t) => t.ref);
      if (!alive) return;
      let due = Infinity;
      for (const t of this.timers.values()) due = Math.min(due, t.due);
      const wait = this.finishedExecs.length > 0 ? 0 : Math.max(0, due - now);
      if (wait > 0 || now - lastYield > YIELD_EVERY_MS) {
        await this.sleep(Math.min(wait, this.deadline - now + 1));
        lastYield = Date.now();
      }
      if (this.opts.signal?.aborted) {
        this.stop = 'abort';
        return;
      }
      for (const done of this.finishedExecs.splice(0)) {
        this.callInternal('dispatch', ['exec', done.id, done.payload]);
        this.drainJobs();
        if (this.finished) return;
      }
      const fireAt = Date.now();
      const dueTimers = [...this.timers.entries()].filter(([, t]) => t.due <= fireAt).sort((a, b) => a[1].due - b[1].due || a[0] - b[0]);
      for (const [id] of dueTimers) {
        if (!this.timers.delete(id)) continue; // cleared by an earlier callback
        this.callInternal('dispatch', ['timer', id, '']);
        this.drainJobs();
        if (this.finished) return;
      }
    }
  }

  /** Waits for `ms`, a child process to end, or cancellation, whichever comes first. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.opts.signal?.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      // A zero wait still goes through the task queue, so the worker can answer pings.
      const timer = setTimeout(done, Number.isFinite(ms) ? ms : 2 ** 31 - 1);
      this.wake = done;
      this.opts.signal?.addEventListener('abort', done, { once: true });
    });
  }

  private drainJobs(): void {
    while (!this.finished && this.rt.hasPendingJob()) {
      const r = this.rt.executePendingJobs(-1);
      if (r.error) {
        this.fail(r.error);
        return;
      }
    }
  }

  /** True when the main module's evaluation has failed (and the run must end). */
  private checkMain(): boolean {
    if (!this.mainPromise) return false;
    const main = this.mainPromise;
    const state = this.ctx.getPromiseState(main);
    if (state.type === 'pending') return false;
    this.mainPromise = null;
    if (state.type === 'rejected') {
      main.dispose();
      this.fail(state.error);
      return true;
    }
    // A module without top-level await may evaluate to a non-promise: then value is `main` itself.
    if (state.value !== main) state.value.dispose();
    main.dispose();
    return false;
  }

  private callInternal(name: string, args: Array<string | number | boolean>): void {
    if (!this.internal) return;
    const fn = this.ctx.getProp(this.internal, name);
    const handles = args.map((a) =>
      typeof a === 'string' ? this.ctx.newString(a) : typeof a === 'number' ? this.ctx.newNumber(a) : a ? this.ctx.true : this.ctx.false,
    );
    const r = this.ctx.callFunction(fn, this.ctx.undefined, ...handles);
    for (const h of handles) h.dispose();
    fn.dispose();
    if (r.error) this.fail(r.error);
    else r.value.dispose();
  }

  private emitExit(code: number): number {
    if (!this.internal) return code;
    const fn = this.ctx.getProp(this.internal, 'emitExit');
    const arg = this.ctx.newNumber(code);
    const r = this.ctx.callFunction(fn, this.ctx.undefined, arg);
    arg.dispose();
    fn.dispose();
    if (r.error) {
      this.fail(r.error);
      return this.exitCode ?? 1;
    }
    const n = this.ctx.getNumber(r.value);
    r.value.dispose();
    return this.exitCode ?? n;
  }

  /** An exception escaped the script: classify it and end the run. Disposes `err`. */
  private fail(err: QuickJSHandle): void {
    try {
      if (this.exitCode !== null || this.stop !== null || this.failure !== null) return;
      if (isProcessExit(this.ctx, this.internal, err)) {
        this.exitCode ??= 0;
        return;
      }
      const dumped = dumpError(this.ctx, err);
      if (dumped.name === 'InternalError' && /out of memory/.test(dumped.message)) {
        this.failure = { code: 134, text: outOfMemory(this.opts.memoryLimitBytes) };
        // Linear memory never shrinks: only a new module gives the grown heap back to the tab.
        this.poisoned = true;
        return;
      }
      if (dumped.name === 'InternalError' && dumped.message === 'interrupted') {
        this.stop ??= 'time';
        return;
      }
      this.failure = { code: 1, text: `${formatScriptError(this.ctx, this.internal, err, dumped)}\n\nNode.js ${NODE_VERSION} (QuickJS, offline engine)\n` };
    } finally {
      err.dispose();
    }
  }

  // ── output ───────────────────────────────────────────────────────────────

  exit(code: number): void {
    this.exitCode ??= code;
  }

  writeBytes(fd: 1 | 2, bytes: Uint8Array): void {
    this.write(fd, this.decoders[fd].decode(bytes, { stream: true }));
  }

  write(fd: 1 | 2, text: string): void {
    if (this.out[fd].length + text.length > MAX_OUTPUT_CHARS) {
      this.truncated = true;
      return;
    }
    this.out[fd] += text;
  }

  /**
   * child_process: runs after the script's current turn (so its writes so far are flushed to
   * the shell first); the shell's changes are then copied back, keeping the script's newer ones.
   */
  startExec(id: number, command: string, cwd: string, env: Record<string, string>, stdin: string): void {
    this.runningExecs.add(id);
    const work = async () => {
      await Promise.resolve();
      await this.vfs.flushTo(this.opts.fs);
      const r = await this.opts.exec(command, { cwd, env, stdin });
      await this.vfs.reloadFrom(this.opts.fs);
      return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    };
    void work()
      .catch((e: unknown) => ({ code: 127, stdout: '', stderr: `${(e as Error).message}\n` }))
      .then((payload) => {
        this.runningExecs.delete(id);
        this.finishedExecs.push({ id, payload: JSON.stringify(payload) });
        this.wake?.();
      });
  }
}
