/**
 * The client's address for per-IP limits, from `X-Forwarded-For`: `next start` sets it to the
 * socket's address when a request comes without one, and each trusted reverse proxy appends the
 * address it was reached from. With `trustedProxies` proxies in front, the client is the entry that
 * many from the right (0 or 1: the last one). Served directly, a program may send its own header
 * and so pick its address: the per-IP limit then binds browsers, not scripts; the hourly cap per
 * agent (counted in the database) binds everyone.
 */
export function clientIp(headers: Headers, trustedProxies: number): string {
  const entries = (headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0 && e.length <= 64);
  if (entries.length === 0) return 'unknown';
  return entries[Math.max(0, entries.length - Math.max(1, trustedProxies))]!.toLowerCase();
}
