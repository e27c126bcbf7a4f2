import 'server-only';
import { latestDue, nextFireAfter } from '~/lib/cron-schedule';
import { type DeploymentDeps, fire } from '~/server/commands/deployment-commands';
import { errorFields, logger } from '~/server/log';

const log = logger('deployment-scheduler');

/** A run claimed this long ago with neither session nor error: its instance stopped mid-fire. */
export const UNFINISHED_RUN_MS = 5 * 60_000;

/**
 * One scheduler tick (every instance runs it on the ticker; the database decides who fires):
 * each scheduled deployment due at `now` fires for the newest scheduled time at or before `now`,
 * claimed in the database by (deployment, scheduled time), so exactly one run is written per
 * scheduled time however many instances tick at once, and a restart never fires a time again.
 *
 * Missed triggers (every instance down, or the tick late): the times missed are coalesced into
 * one run, for the newest of them; older missed times are skipped and leave no run. Times that
 * pass while a deployment is paused are skipped too (it resumes from the unpause).
 */
export async function schedulerTick(d: DeploymentDeps, now: Date = d.now ? d.now() : new Date()): Promise<number> {
  let fired = 0;
  for (const dep of await d.deployments.due(now.toISOString())) {
    if (!dep.schedule || !dep.next_fire_at) continue;
    try {
      const due = latestDue(dep.schedule, new Date(dep.next_fire_at), now);
      const next = nextFireAfter(dep.schedule, due ?? now)?.toISOString() ?? null;
      if (!due) {
        await d.deployments.advance(dep.id, dep.next_fire_at, next);
        continue;
      }
      // The claim comes first: an instance that dies after it leaves the time claimed, and the
      // next tick (here or elsewhere) finds it taken and only moves the schedule on.
      const run = await fire(d, dep, { type: 'schedule', scheduled_at: due.toISOString() });
      if (run) {
        await d.deployments.recordScheduledRun(dep.id, now.toISOString());
        fired++;
      }
      await d.deployments.advance(dep.id, dep.next_fire_at, next);
    } catch (e) {
      log.warn('scheduled fire failed; tried again next tick', { deployment: dep.id, ...errorFields(e) });
    }
  }
  // Runs an instance claimed and never finished (it stopped between claim and session) say so.
  // By the wall clock, as their created_at is: never the scheduling clock a test moves.
  for (const run of await d.deployments.unfinishedRuns(new Date(Date.now() - UNFINISHED_RUN_MS).toISOString())) {
    await d.deployments.finishRun(run.id, { error: { type: 'unknown_error', message: 'the instance firing this run stopped before its session was created' } });
  }
  return fired;
}
