import 'client-only';
import type { EngineTool, MountChanges } from '~/lib/browser/engine/types';

/**
 * Messages between the offline engine (page) and its shell worker. Every request carries an id;
 * the worker answers it with exactly one `result` or `error`, after zero or more `output` chunks.
 * Types only: both sides import it.
 */

/** `mounts*`: the session's mounts under `/mnt` (shell-mounts.ts): plan → the paths to fetch, place one, changes after a call. */
export type WorkerOp = EngineTool | 'listFiles' | 'readFile' | 'writeFile' | 'mountsPlan' | 'mountsPlace' | 'mountsChanges';

/** What a call answers: text, a list, or the mounts' changes. */
export type WorkerValue = string | string[] | MountChanges;

export interface WorkerInit {
  type: 'init';
  sessionId: string;
  nodeTimeLimitMs: number;
  nodeMemoryLimitBytes: number;
}

export type WorkerRequest =
  | WorkerInit
  | { type: 'call'; id: number; op: WorkerOp; input: Record<string, unknown> }
  /** Cancels a running or queued call (bash: the shell stops at the next statement). */
  | { type: 'abort'; id: number }
  | { type: 'ping'; id: number }
  /** Test hook for the watchdog: block the worker's thread for `ms`. */
  | { type: 'hang'; ms: number };

export interface ReadyTimings {
  /** Worker start → shell ready. */
  totalMs: number;
  /** Reading the workspace back from IndexedDB. */
  restoreMs: number;
}

export type WorkerReply =
  | { type: 'ready'; restoredFiles: number; timings: ReadyTimings; persistError?: string }
  | { type: 'init-error'; message: string }
  /** A queued call began running (its time limit starts now). */
  | { type: 'started'; id: number }
  | { type: 'output'; id: number; chunk: string }
  | { type: 'result'; id: number; value: WorkerValue }
  | { type: 'error'; id: number; message: string }
  | { type: 'pong'; id: number };
