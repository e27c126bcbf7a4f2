import 'server-only';
import { type Logger, errorFields } from '~/server/log';

/**
 * A background job every `intervalMs` (the harness's sweeper, the widgets' budget watch): one tick
 * at a time, so ticks never pile up on the pool while the store hangs; a failing tick is logged
 * once per outage at warn (then debug) and tried again next tick. Returns the stop.
 */
export function startTicker(job: { name: string; log: Logger; intervalMs: number; tick: () => Promise<void>; paused?: () => boolean; runNow?: boolean }): () => void {
  let stopped = false;
  let ticking = false;
  let failing = false;
  const run = async () => {
    if (stopped || ticking || job.paused?.()) return;
    ticking = true;
    try {
      await job.tick();
      if (failing) job.log.info(`${job.name} recovered`);
      failing = false;
    } catch (e) {
      if (failing) job.log.debug(`${job.name} failed`, errorFields(e));
      else job.log.warn(`${job.name} failed; retrying every tick`, errorFields(e));
      failing = true;
    } finally {
      ticking = false;
    }
  };
  const timer = setInterval(() => void run(), job.intervalMs);
  timer.unref();
  if (job.runNow) void run();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
