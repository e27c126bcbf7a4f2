/**
 * Polls `fn` until it gives a truthy value and returns it; past `ms`, fails naming `what`. For
 * tests that wait on something another process or a background loop does.
 */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, o: { ms?: number; everyMs?: number } = {}): Promise<T> {
  const end = Date.now() + (o.ms ?? 60_000);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, o.everyMs ?? 100));
  }
}
