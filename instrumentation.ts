/** Starts process-wide work (store, sweeper) once per `next start`, before the first request. */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { startRuntimeAtBoot } = await import('~/server/runtime');
  try {
    await startRuntimeAtBoot();
  } catch (e) {
    // Next has already bound the port (`npm start` checks settings before that, scripts/start.mjs):
    // one line saying what is wrong and stop, rather than a stack trace and a 500 for every request.
    const { startFailureLine } = await import('~/server/start-check');
    process.stderr.write(`${startFailureLine(e)}\n`);
    process.exit(1);
  }
}
