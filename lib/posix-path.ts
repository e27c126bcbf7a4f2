/**
 * POSIX path helpers for workspaces (Node's `path` is not in the browser bundle): the browser
 * engines' virtual filesystems and the file tools' rules every hand shares.
 */

/** Resolves `p` against `base` (an absolute path) and removes `.`, `..` and repeated slashes. */
export function resolvePosix(base: string, p: string): string {
  const joined = p.startsWith('/') ? p : `${base}/${p}`;
  const out: string[] = [];
  for (const seg of joined.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

export function dirnamePosix(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

export function basenamePosix(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** `abs` relative to `root` ('' for the root itself), or null when it is outside. */
export function relativeInside(root: string, abs: string): string | null {
  if (abs === root) return '';
  const prefix = root === '/' ? '/' : `${root}/`;
  return abs.startsWith(prefix) ? abs.slice(prefix.length) : null;
}

export function joinPosix(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}
