import 'server-only';
import { DATA_DIR_SENTENCE, currentDataDirWatch } from '~/server/data-dir-watch';

/** Names this server to `npm start`'s port check, which tells "Paddock is already running" from "another program". */
export const HEALTH_SERVICE = 'paddock';
/** A probe hammering /healthz costs at most one data dir write check per second. */
const HEALTH_CHECK_MAX_AGE_MS = 1_000;

/**
 * The health check: 200 when the data directory is usable, 503 with the reason when it is not
 * (or the runtime has not started yet). No path and no detail a stranger could use: it answers
 * without sign-in; the owner's pages and the log name the folder.
 */
export function healthAnswer(): Response {
  const watch = currentDataDirWatch();
  const headers = { 'cache-control': 'no-store' };
  if (!watch) return Response.json({ service: HEALTH_SERVICE, status: 'starting', checks: { data_dir: 'unknown' } }, { status: 503, headers });
  const problem = watch.check(HEALTH_CHECK_MAX_AGE_MS);
  if (!problem) return Response.json({ service: HEALTH_SERVICE, status: 'ok', checks: { data_dir: 'ok' } }, { headers });
  return Response.json({ service: HEALTH_SERVICE, status: 'failing', checks: { data_dir: problem.kind }, problems: [DATA_DIR_SENTENCE[problem.kind]] }, { status: 503, headers });
}
