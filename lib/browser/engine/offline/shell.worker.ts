import type { WorkerOp, WorkerReply, WorkerRequest, WorkerValue } from '~/lib/browser/engine/offline/protocol';
import type { MountEntry } from '~/lib/browser/engine/types';
import { OfflineShell } from '~/lib/browser/engine/offline/shell';

/**
 * The offline engine's Web Worker: owns the shell and its filesystem, answers requests from the
 * page (see protocol.ts). It has no DOM and no access to the page's globals; scripts run one
 * level further in, inside QuickJS. bash calls run one at a time (they share the shell's state);
 * file operations run as they come.
 */

let shell: OfflineShell | null = null;
const controllers = new Map<number, AbortController>();
/** Calls aborted while still queued behind another bash call. */
const abortedEarly = new Set<number>();
let bashQueue: Promise<unknown> = Promise.resolve();

const post = (m: WorkerReply) => self.postMessage(m);

const MUTATING: ReadonlySet<WorkerOp> = new Set<WorkerOp>(['bash', 'write', 'edit', 'writeFile']);

async function runOp(s: OfflineShell, id: number, op: WorkerOp, input: Record<string, unknown>, signal: AbortSignal): Promise<WorkerValue> {
  switch (op) {
    case 'bash': {
      const text = await s.runBash(input, signal);
      post({ type: 'output', id, chunk: text });
      return text;
    }
    case 'read':
    case 'write':
    case 'edit':
    case 'glob':
    case 'grep':
      return s.tools.run(op, input);
    case 'listFiles':
      return s.tools.listFiles();
    case 'readFile':
      return s.tools.readFile(String(input.path));
    case 'writeFile':
      return s.tools.write(input);
    case 'mountsPlan':
      return s.mounts.plan(input.mounts as MountEntry[]);
    case 'mountsPlace':
      await s.mounts.place(input.mount as MountEntry, input.bytes as Uint8Array);
      return '';
    case 'mountsChanges':
      return s.mounts.changes();
    default:
      throw new Error(`unknown operation ${String(op)}`);
  }
}

async function call(id: number, op: WorkerOp, input: Record<string, unknown>): Promise<void> {
  const s = shell;
  if (!s) {
    post({ type: 'error', id, message: 'the offline engine is not ready' });
    return;
  }
  const controller = new AbortController();
  if (abortedEarly.delete(id)) controller.abort();
  controllers.set(id, controller);
  try {
    post({ type: 'started', id });
    const value = await runOp(s, id, op, input, controller.signal);
    // Saved before the reply: a reload right after the call keeps its files.
    if (MUTATING.has(op)) await s.persist().catch(() => undefined);
    post({ type: 'result', id, value });
  } catch (e) {
    if (MUTATING.has(op)) await s.persist().catch(() => undefined);
    post({ type: 'error', id, message: e instanceof Error ? e.message : String(e) });
  } finally {
    controllers.delete(id);
  }
}

self.addEventListener('message', (event: MessageEvent<WorkerRequest>) => {
  const msg = event.data;
  switch (msg.type) {
    case 'init': {
      void (async () => {
        try {
          const s = new OfflineShell(msg.sessionId, { nodeTimeLimitMs: msg.nodeTimeLimitMs, nodeMemoryLimitBytes: msg.nodeMemoryLimitBytes });
          const t0 = performance.now();
          let restoredFiles = 0;
          let persistError: string | undefined;
          try {
            restoredFiles = await s.restore();
          } catch (e) {
            // No IndexedDB (e.g. blocked storage): run anyway, without persistence.
            persistError = e instanceof Error ? e.message : String(e);
          }
          const restoreMs = performance.now() - t0;
          shell = s;
          // performance.now() in a worker counts from the worker's start.
          post({ type: 'ready', restoredFiles, persistError, timings: { totalMs: performance.now(), restoreMs } });
          s.warmUp();
        } catch (e) {
          post({ type: 'init-error', message: e instanceof Error ? e.message : String(e) });
        }
      })();
      return;
    }
    case 'call': {
      if (msg.op === 'bash') {
        bashQueue = bashQueue.then(() => call(msg.id, msg.op, msg.input));
      } else void call(msg.id, msg.op, msg.input);
      return;
    }
    case 'abort': {
      const c = controllers.get(msg.id);
      if (c) c.abort();
      else abortedEarly.add(msg.id);
      return;
    }
    case 'ping':
      post({ type: 'pong', id: msg.id });
      return;
    case 'hang': {
      const until = Date.now() + msg.ms;
      while (Date.now() < until) {
        // Busy on purpose: the watchdog test needs a worker that cannot answer.
      }
      return;
    }
  }
});
