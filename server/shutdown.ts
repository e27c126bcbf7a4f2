import 'server-only';
import { errorFields, logger } from '~/server/log';

const log = logger('shutdown');

/**
 * "This server is stopping": live streams (the UI's follow, `/v1`'s SSE) end on it with a
 * restarting notice, so clients reconnect (to this server restarted, or another instance) instead
 * of holding the process open. On globalThis: Next loads this module more than once per process.
 */
const KEY = Symbol.for('paddock.stopping');
type Holder = { [KEY]?: AbortController };

function controller(): AbortController {
  const g = globalThis as Holder;
  return (g[KEY] ??= new AbortController());
}

export function stoppingSignal(): AbortSignal {
  return controller().signal;
}

/** A runtime started again in this process (tests) starts with streams that are not stopping. */
export function resetStoppingSignal(): void {
  (globalThis as Holder)[KEY] = new AbortController();
}

/** What a stream tells its client when the server stops under it. */
export const RESTARTING_MESSAGE = 'the server is restarting: reconnect and resume from the last event you have';

/**
 * Stops this server's share of the work, in the order that loses nothing: no new turns (the
 * sweeper and wakes stop), running turns cut off and their leases released (another instance,
 * or this one restarted, takes them over at once instead of after the lease's expiry), idle
 * local hands suspended with their files kept and the warm pool stopped, then live streams ended
 * with a restarting notice. What a turn had not stored is re-derived from the log by whoever runs
 * the session next, as after a crash.
 */
/** What of a runtime a stop needs (a shape, not the Runtime type: runtime.ts imports this file). */
export interface StoppableRuntime {
  harness: { close(): Promise<void> };
  hands: { stopAll(): Promise<unknown> };
  stopBackground?: () => void;
}

export async function stopRuntime(rt: StoppableRuntime): Promise<void> {
  const t0 = performance.now();
  rt.stopBackground?.();
  await rt.harness.close().catch((e: unknown) => log.warn('harness close failed', errorFields(e)));
  await rt.hands.stopAll().catch((e: unknown) => log.warn('hands stop failed', errorFields(e)));
  controller().abort(new Error(RESTARTING_MESSAGE));
  log.info('stopped', { ms: Math.round(performance.now() - t0) });
}

/**
 * SIGINT/SIGTERM stop the runtime, then exit (Next's own handler, which waits for open
 * connections to end, exits too once the streams have ended). Whatever happens, the process is
 * gone within `timeoutMs`.
 */
export function installGracefulStop(runtime: () => Promise<StoppableRuntime> | null, timeoutMs: number): void {
  const g = globalThis as { [k: symbol]: unknown };
  const installed = Symbol.for('paddock.stop-installed');
  if (g[installed]) return;
  g[installed] = true;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const code = signal === 'SIGINT' ? 130 : 143;
    log.info('stopping', { signal, timeoutMs });
    setTimeout(() => {
      log.warn('stop took too long; exiting', { timeoutMs });
      process.exit(code);
    }, timeoutMs).unref();
    void (async () => {
      const rt = await runtime()?.catch(() => null);
      if (rt) await stopRuntime(rt);
      else controller().abort(new Error(RESTARTING_MESSAGE));
      // Next's handler exits once its connections close; this is for when it is not installed
      // (NEXT_MANUAL_SIG_HANDLE) or a connection lingers.
      setTimeout(() => process.exit(code), 500).unref();
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
