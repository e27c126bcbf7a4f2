/** Where a signed-out visitor is sent, to come back to `path` after signing in. */
export function signInPath(path: string | null): string {
  const next = safeNext(path);
  return next === '/' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;
}

/** Only a path on this site: never `//evil.example`, `/\evil.example` or `https://…` (no open redirect). */
export function safeNext(path: string | null | undefined): string {
  if (!path || !path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\') || /[\r\n]/.test(path)) return '/';
  return path;
}
