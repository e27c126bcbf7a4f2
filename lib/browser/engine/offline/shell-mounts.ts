import type { InMemoryFs } from 'just-bash/browser';
import type { MountChanges, MountEntry } from '~/lib/browser/engine/types';
import { MEMORY_MOUNTS, SESSION_MOUNT_ROOTS, SESSION_OUTPUTS, mountSegments, underRoot } from '~/lib/mounts';

/** Files looked at per root and call, as the server's mount points do. */
const MAX_LISTED = 1000;
/** An output past this is not sent back (the server would refuse it: the tRPC body limit is lower still). */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** A memory file is read back up to this (the store refuses far less: its refusal then names the file). */
const MAX_MEMORY_READ = 1024 * 1024;

async function sha256(b: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', b as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * The session's mounts inside the offline engine's filesystem, beside `/workspace` (never saved
 * to IndexedDB: the server has them): the worker remembers what it placed, so a restarted worker
 * (an empty filesystem) simply asks for everything again. Read-only is a file mode here, which
 * just-bash does not enforce: whether a memory store may be written is the server's decision.
 */
export class ShellMounts {
  /** Placed mounts: their version and the SHA-256 of the bytes written. */
  private readonly placed = new Map<string, { version: string; sha256: string }>();
  /** Outputs already sent, by path relative to the outputs folder: `size:mtime`. */
  private readonly seen = new Map<string, string>();

  constructor(private readonly fs: InMemoryFs) {}

  /** Files under `dir`, relative, at most MAX_LISTED (symlinks and others left out). */
  private async files(dir: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      const entries = await this.fs.readdirWithFileTypes(rel ? `${dir}/${rel}` : dir).catch(() => []);
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (out.length >= MAX_LISTED) return;
        const p = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory) await walk(p);
        else if (e.isFile) out.push(p);
      }
    };
    await walk('');
    return out;
  }

  /**
   * Makes the placed roots hold exactly `mounts`: what is there but not wanted is removed (a file
   * taken off the session, or a memory file the store refused), and the paths whose bytes are
   * needed (new, changed, or missing) are returned.
   */
  async plan(mounts: readonly MountEntry[]): Promise<string[]> {
    for (const root of SESSION_MOUNT_ROOTS) await this.fs.mkdir(root.mountPath, { recursive: true });
    const wanted = new Map(mounts.filter((m) => SESSION_MOUNT_ROOTS.some((r) => r.placed && isUnder(r.mountPath, m.mountPath))).map((m) => [m.mountPath, m]));
    const need: string[] = [];
    for (const root of SESSION_MOUNT_ROOTS.filter((r) => r.placed)) {
      const present = new Set((await this.files(root.mountPath)).map((p) => `${root.mountPath}/${p}`));
      for (const p of present) {
        if (wanted.has(p)) continue;
        await this.fs.rm(p, { force: true });
        this.placed.delete(p);
      }
      for (const p of [...this.placed.keys()]) if (isUnder(root.mountPath, p) && !present.has(p)) this.placed.delete(p);
      for (const [p, m] of wanted) if (isUnder(root.mountPath, p) && (!present.has(p) || this.placed.get(p)?.version !== m.version)) need.push(p);
    }
    return need;
  }

  async place(m: MountEntry, bytes: Uint8Array): Promise<void> {
    const dir = m.mountPath.slice(0, m.mountPath.lastIndexOf('/'));
    await this.fs.mkdir(dir, { recursive: true });
    await this.fs.rm(m.mountPath, { force: true, recursive: true });
    await this.fs.writeFile(m.mountPath, bytes);
    await this.fs.chmod(m.mountPath, m.readOnly ? 0o444 : 0o644);
    this.placed.set(m.mountPath, { version: m.version, sha256: await sha256(bytes) });
  }

  /** The outputs new or changed since the last look, and the memory files changed, added or deleted since they were placed. */
  async changes(): Promise<MountChanges> {
    const result: MountChanges = { outputs: [], memory: [], skipped: [] };
    for (const rel of await this.files(SESSION_OUTPUTS)) {
      if (mountSegments(rel) === null) continue;
      const st = await this.fs.stat(`${SESSION_OUTPUTS}/${rel}`);
      const stamp = `${st.size}:${st.mtime.getTime()}`;
      if (this.seen.get(rel) === stamp) continue;
      this.seen.set(rel, stamp);
      if (st.size > MAX_OUTPUT_BYTES) {
        result.skipped.push(`${SESSION_OUTPUTS}/${rel}: over ${MAX_OUTPUT_BYTES} bytes, not kept`);
        continue;
      }
      result.outputs.push({ path: rel, bytes: await this.fs.readFileBuffer(`${SESSION_OUTPUTS}/${rel}`) });
    }
    const now = new Set<string>();
    const changed = new Map<string, { version: string; sha256: string }>();
    for (const rel of await this.files(MEMORY_MOUNTS)) {
      if (mountSegments(rel) === null) continue;
      const mountPath = `${MEMORY_MOUNTS}/${rel}`;
      now.add(mountPath);
      const bytes = await this.fs.readFileBuffer(mountPath);
      const before = this.placed.get(mountPath) ?? null;
      const sha = await sha256(bytes);
      if (before !== null && sha === before.sha256) continue;
      result.memory.push({ mountPath, content: new TextDecoder().decode(bytes.subarray(0, MAX_MEMORY_READ + 1)), readSha256: before?.sha256 ?? null });
      // Given back: not sent again while unchanged; placed again at the next call (no version matches '') from what its store then holds.
      changed.set(mountPath, { version: '', sha256: sha });
    }
    for (const [mountPath, p] of this.placed) {
      if (isUnder(MEMORY_MOUNTS, mountPath) && !now.has(mountPath)) result.memory.push({ mountPath, content: null, readSha256: p.sha256 });
    }
    for (const c of result.memory) this.placed.delete(c.mountPath);
    for (const [p, v] of changed) this.placed.set(p, v);
    return result;
  }
}

function isUnder(root: string, p: string): boolean {
  const rel = underRoot(root, p);
  return rel !== null && mountSegments(rel) !== null;
}
