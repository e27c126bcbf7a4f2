/**
 * One Paddock server process without Next, for the chaos test (server/harness/chaos.test.ts): the
 * same runtime `next start` builds in instrumentation.ts (store, harness, hands, sweeper), from
 * the same environment variables, running until it is killed. The test SIGKILLs it at random
 * moments and starts another, so a crash can land anywhere in a step.
 *
 *   node --conditions=react-server --import tsx server/harness/testing/chaos-worker.ts
 *
 * `--conditions=react-server` makes `server-only` resolve to its empty module, as it does inside
 * Next's server bundles. Configure it with PADDOCK_DATA_DIR (the SQLite file is
 * `paddock.sqlite` there), ANTHROPIC_BASE_URL + ANTHROPIC_API_KEY (the fake Messages API),
 * PADDOCK_DEFAULT_HAND=memory, PADDOCK_WARM_POOL=0, PADDOCK_LEASE_TTL_MS, PADDOCK_SWEEP_MS.
 * Prints `chaos-worker ready <pid>` on stdout once the sweeper runs.
 */
import { getRuntime } from '~/server/runtime';

const runtime = await getRuntime();

// The sweeper's timer is unref'd (it must not keep a server alive on its own); this one does. It
// also ends the worker once its parent is gone (reparented: the test run died without killing
// it), so no orphan keeps running against the database.
const parent = process.ppid;
const keepAlive = setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 500);

// A graceful stop for the end of a test; the chaos itself uses SIGKILL, which skips all of this.
process.once('SIGTERM', () => {
  clearInterval(keepAlive);
  void runtime.harness
    .close()
    .then(() => runtime.store.close())
    .then(() => process.exit(0));
});

process.stdout.write(`chaos-worker ready ${process.pid}\n`);
