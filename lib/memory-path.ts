import { InvalidInputError } from '~/lib/errors';

/** A memory's content: UTF-8 text of at most 100 kB, as the Managed Agents API caps it. */
export const MAX_MEMORY_BYTES = 102_400;
export const MAX_MEMORY_PATH_BYTES = 1024;
export const MAX_MEMORY_PATH_SEGMENTS = 20;

const encoder = new TextEncoder();
export const utf8Length = (s: string): number => encoder.encode(s).length;

/** Control and format characters and the line/paragraph separators: never in a path. */
const FORBIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/**
 * Why a memory path is refused, or null when it is a good one: it starts with `/`, has 1 to 20
 * segments, none empty, `.` or `..`, no control or format character, is NFC and at most 1,024
 * bytes. These rules keep a store mountable as a directory tree (no escape, no two spellings).
 */
export function memoryPathProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'must be absolute within the store: start with /';
  if (path.includes('\0')) return 'must not contain NUL';
  if (FORBIDDEN.test(path)) return 'must not contain control or format characters';
  if (path.normalize('NFC') !== path) return 'must be in Unicode Normalization Form C';
  if (utf8Length(path) > MAX_MEMORY_PATH_BYTES) return `must be at most ${MAX_MEMORY_PATH_BYTES} bytes`;
  const segments = path.slice(1).split('/');
  if (segments.length > MAX_MEMORY_PATH_SEGMENTS) return `must have at most ${MAX_MEMORY_PATH_SEGMENTS} segments`;
  for (const s of segments) {
    if (s === '') return 'must not have an empty segment (// or a trailing /)';
    if (s === '.' || s === '..') return 'must not have a . or .. segment';
  }
  return null;
}

/** The path, or InvalidInputError naming the field and what is wrong. */
export function checkMemoryPath(path: string, field = 'path'): string {
  const problem = memoryPathProblem(path);
  if (problem) throw new InvalidInputError(`${field}: ${JSON.stringify(path.slice(0, 200))} ${problem}`);
  return path;
}

/** A list's `path_prefix`: any start of a path (`/`, `/notes/`, `/notes/a`), with the path's character rules. */
export function checkPathPrefix(prefix: string): string {
  if (!prefix.startsWith('/')) throw new InvalidInputError('path_prefix: must start with /');
  if (prefix.includes('\0') || FORBIDDEN.test(prefix)) throw new InvalidInputError('path_prefix: must not contain NUL, control or format characters');
  if (utf8Length(prefix) > MAX_MEMORY_PATH_BYTES) throw new InvalidInputError(`path_prefix: must be at most ${MAX_MEMORY_PATH_BYTES} bytes`);
  if (prefix.split('/').some((s) => s === '..' || s === '.')) throw new InvalidInputError('path_prefix: must not have a . or .. segment');
  return prefix;
}

/**
 * A memory list's items at `depth` below `prefix`: memories within it, and each deeper subtree
 * rolled up as one `memory_prefix` (its path ends with `/`). Depth 0 lists every memory. Sorted by
 * path. `prefix` is measured from its last `/` (so `/no` groups `/notes/a/b` as `/notes/`).
 */
export function rollUp(paths: readonly string[], prefix: string, depth: number): Array<{ path: string; prefix: boolean }> {
  const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
  const out = new Map<string, boolean>();
  for (const p of paths) {
    if (!p.startsWith(prefix)) continue;
    const segs = p.slice(base.length).split('/');
    if (depth > 0 && segs.length > depth) out.set(base + segs.slice(0, depth).join('/') + '/', true);
    else out.set(p, false);
  }
  return [...out].map(([path, isPrefix]) => ({ path, prefix: isPrefix })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
