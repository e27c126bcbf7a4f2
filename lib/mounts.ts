/**
 * What a session puts into its hands besides the workspace, described once for every hand kind:
 * a list of mounts, each a path inside the hand, where its bytes come from, and whether the agent
 * may write there. Each hand kind materialises the list its own way (docs/hands.md): a sandbox
 * binds host folders into bubblewrap, a remote paddock-hand gets copies before its first call, a
 * browser hand gets them written into its workspace.
 */

/** Where a session's uploaded files appear (read-only), and where what the agent leaves is collected from. */
export const SESSION_UPLOADS = '/mnt/session/uploads';
export const SESSION_OUTPUTS = '/mnt/session/outputs';
/** A session's memory stores (`/mnt/memory/<store>/`) and its agent's skills (`/mnt/skills/<name>/`). */
export const MEMORY_MOUNTS = '/mnt/memory';
export const SKILL_MOUNTS = '/mnt/skills';
/** Every mount lives under here: a sandbox hand binds one host folder per root below it. */
export const MOUNTS_ROOT = '/mnt';

/** Bytes as a stream of chunks (a Node Readable or a web ReadableStream are both this). */
export type ByteSource = AsyncIterable<Uint8Array>;

export type MountSource =
  /** A file already on the server's disk. */
  | { hostPath: string }
  /** Small contents known up front (a memory, a generated file). */
  | { contents: string | Uint8Array }
  /** Bytes opened on demand (a blob in the Files API's store). */
  | { open: () => Promise<ByteSource> };

export interface Mount {
  /** Absolute path in the hand, under MOUNTS_ROOT (e.g. `/mnt/session/uploads/data.csv`). */
  mountPath: string;
  source: MountSource;
  readOnly: boolean;
  /** What identifies its bytes (a sha256): an unchanged version is not copied again. */
  version?: string;
}

/**
 * A folder of mounts bound into a sandbox hand as one unit (fixed when the hand starts, so a
 * warm-pool hand has them too; the files inside change while it runs).
 */
export interface MountRoot {
  /** Absolute path in the hand. */
  mountPath: string;
  readOnly: boolean;
  /** The server puts the session's files here before each call (not the outputs folder, which only the agent fills). */
  placed: boolean;
}

/**
 * The folders every sandbox hand binds: the uploads and skills read-only, the outputs writable,
 * and the memory stores writable (each store as it is before each call; what the agent changes
 * there goes back to its store after the call: docs/memory-and-skills.md).
 */
export const SESSION_MOUNT_ROOTS: readonly MountRoot[] = [
  { mountPath: SESSION_UPLOADS, readOnly: true, placed: true },
  { mountPath: SESSION_OUTPUTS, readOnly: false, placed: false },
  { mountPath: MEMORY_MOUNTS, readOnly: false, placed: true },
  { mountPath: SKILL_MOUNTS, readOnly: true, placed: true },
];

/**
 * The segments of a relative path under a mount root, or null when it is not a plain one (empty,
 * `.`/`..` segments, NUL, a backslash).
 */
export function mountSegments(rel: string): string[] | null {
  if (rel.length === 0 || rel.length > 1024 || rel.includes('\0') || rel.includes('\\')) return null;
  const segs = rel.split('/');
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s.length > 255)) return null;
  return segs;
}

/**
 * A file resource's mount path as stored: the SDK's default `/mnt/session/uploads/<file_id>`; an
 * absolute path must be under the uploads folder; a relative one is taken as under it.
 * Returns an error message instead when the path is not acceptable.
 */
export function uploadMountPath(mountPath: string | null | undefined, fileId: string): { path: string } | { error: string } {
  const raw = mountPath ?? fileId;
  const prefix = `${SESSION_UPLOADS}/`;
  const rel = raw.startsWith('/') ? (raw.startsWith(prefix) ? raw.slice(prefix.length) : null) : raw;
  if (rel === null) return { error: `must be under ${SESSION_UPLOADS}/ (or relative to it)` };
  if (mountSegments(rel) === null) return { error: 'must be a plain path: no empty, "." or ".." segments, NUL or backslash' };
  return { path: prefix + rel };
}

/** `mountPath` relative to a root that holds it, or null. */
export function underRoot(root: string, mountPath: string): string | null {
  return mountPath.startsWith(`${root}/`) ? mountPath.slice(root.length + 1) : null;
}
