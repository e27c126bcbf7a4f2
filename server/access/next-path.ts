/** Where a signed-out visitor is sent, to come back to `path` after signing in. */
export function signInPath(path: string | null): string {
  const next = safeNext(path);
  return next === '/' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;
}

/** Stands for this server while `next` is resolved: only what stays on it may be followed. */
const HERE = 'http://paddock.invalid';
/**
 * Browsers drop TAB, CR and LF from a URL and read `\` as `/`, so `/<TAB>/evil.example` is
 * `//evil.example`; no control character or backslash has a place in a path we send people to.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this refuses
const UNSAFE = /[\u0000-\u001f\u007f\\]/;
/** A longer `next` is no path of ours, and would only bloat the sign-in URL. */
const MAX_NEXT = 2048;

/**
 * Only a path on this site (no open redirect): `next` is resolved as the browser would resolve it,
 * against this server's origin, and kept only when it stays there. Answers the resolved form
 * (path, query, fragment; non-ASCII percent-encoded, so it fits a Location header), or `/`.
 */
export function safeNext(path: string | null | undefined): string {
  if (typeof path !== 'string' || path.length > MAX_NEXT || !path.startsWith('/') || UNSAFE.test(path)) return '/';
  // The same refusals once decoded: a page or proxy that decodes the path must not find them either.
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return '/';
  }
  if (UNSAFE.test(decoded) || decoded.startsWith('//')) return '/';
  let url: URL;
  try {
    url = new URL(path, HERE);
  } catch {
    return '/';
  }
  if (url.origin !== HERE) return '/';
  const resolved = url.pathname + url.search + url.hash;
  // `/.//evil.example` and `/%2e%2e//evil.example` resolve to `//evil.example`: a path the browser
  // would read as another host when it is sent back as a Location.
  if (!resolved.startsWith('/') || resolved.startsWith('//') || UNSAFE.test(resolved)) return '/';
  return resolved;
}
