/** Starts process-wide work (store, sweeper) once per `next start`, before the first request. */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { startRuntimeAtBoot } = await import('~/server/runtime');
  await startRuntimeAtBoot();
}
