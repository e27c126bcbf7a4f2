import { ToolError } from '~/lib/hand';

/**
 * The little a hand's filesystem must offer for the file tools (`file-tools.ts`): a real disk
 * (paddock-hand), the WebContainer's `fs`, the offline engine's in-memory fs, a map in memory.
 * Paths are absolute POSIX paths of that filesystem.
 */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface ToolFs {
  /** The entry itself (a symlink is not followed); null when absent. */
  lstat(abs: string): Promise<{ kind: EntryKind; size: number } | null>;
  /** After following symlinks; null when absent. */
  stat(abs: string): Promise<{ kind: EntryKind; size: number } | null>;
  readBytes(abs: string): Promise<Uint8Array>;
  /** Creates missing parent folders. */
  writeText(abs: string, content: string): Promise<void>;
  /** A folder's entries (symlinks not followed). What a hand hides from its agent is left out here. */
  list(abs: string): Promise<Array<{ name: string; kind: EntryKind }>>;
  /** The path with every symlink resolved (it must exist); absent on a filesystem without symlinks. */
  realpath?(abs: string): Promise<string>;
  /** A symlink's target, so a dangling link is followed by hand (a write would follow it). */
  readlink?(abs: string): Promise<string>;
}

/** The errno code of a filesystem error (`.code`, or a virtual fs's "ENOENT: no such file…"). */
export function errnoOf(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const message = (e as { message?: unknown }).message;
  const m = /^(E[A-Z]+)\b/.exec(typeof message === 'string' ? message : '');
  return m?.[1];
}

/** A filesystem error as the model reads it, the same words on every hand. */
export function fsError(tool: string, p: string, e: unknown): ToolError {
  switch (errnoOf(e)) {
    case 'ENOENT':
      return new ToolError(`${tool}: no such file: ${p}`);
    case 'EISDIR':
      return new ToolError(`${tool}: ${p} is a directory`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new ToolError(`${tool}: a parent of ${p} is not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`${tool}: permission denied: ${p}`);
    default:
      return new ToolError(`${tool}: ${p}: ${(e as Error).message}`);
  }
}
