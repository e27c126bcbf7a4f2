/** Translates a glob (`*`, `**`, `?`, `{a,b}`) into an anchored RegExp over `/`-separated paths. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) re += '\\{';
      else {
        re += `(?:${glob.slice(i + 1, end).split(',').map(escape).join('|')})`;
        i = end;
      }
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`);
}

function escape(s: string): string {
  return s.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}

/** Folders that glob, grep and the file list skip unless the pattern or path names them. */
export const SKIPPED_DIRS: readonly string[] = ['node_modules', '.git'];

/** Which folder names a walk for this pattern (or path) skips: SKIPPED_DIRS it does not name. */
export function skipUnlessNamed(text: string): (name: string) => boolean {
  const named = SKIPPED_DIRS.filter((d) => text.includes(d));
  return (name) => SKIPPED_DIRS.includes(name) && !named.includes(name);
}

/** The pattern's literal leading folders ("src/app" for "./src/app/**\/*.ts"): a walk need only start there. */
export function globRoot(pattern: string): string {
  const literal: string[] = [];
  for (const seg of pattern.replace(/^\.\//, '').split('/').slice(0, -1)) {
    if (/[*?{[]/.test(seg)) break;
    literal.push(seg);
  }
  return literal.join('/');
}

/** glob's answer, the same on every hand: sorted matches, capped with a notice, or a sentence when none. */
export function formatGlobHits(hits: string[], pattern: string, cap: number): string {
  if (hits.length === 0) return `no files match ${pattern}`;
  hits.sort();
  if (hits.length <= cap) return hits.join('\n');
  return `${hits.slice(0, cap).join('\n')}\n[glob: ${hits.length - cap} more matches not shown; narrow the pattern]`;
}

/**
 * How glob walks for `pattern` under the folder `base` (workspace-relative, '' = the workspace):
 * the pattern is relative to `base`; the walk starts at `start` (workspace-relative) and yields
 * workspace-relative paths, of which `matches` keeps the hits (answers stay workspace-relative,
 * so they can be passed to read as they are).
 */
export function globPlan(base: string, pattern: string): { start: string; matches: (rel: string) => boolean; skip: (name: string) => boolean } {
  const re = globToRegExp(pattern.replace(/^\.\//, ''));
  const root = globRoot(pattern);
  const prefix = base === '' ? '' : `${base}/`;
  return {
    start: root === '' ? base : `${prefix}${root}`,
    matches: (rel) => rel.startsWith(prefix) && re.test(rel.slice(prefix.length)),
    skip: skipUnlessNamed(`${base}/${pattern}`),
  };
}
