import 'server-only';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { type Mount, MEMORY_MOUNTS, MOUNTS_ROOT, type MountRoot, SESSION_MOUNT_ROOTS, SESSION_OUTPUTS, mountSegments, underRoot } from '~/lib/mounts';
import type { HandMountPoint, MemoryChange, OutputFile } from '~/server/hands/mount-port';
import type { BindMount } from '~/server/hands/sandbox/mount-binds';

/** At most this many outputs are looked at per call: a hand cannot make the server walk forever. */
const MAX_OUTPUT_ENTRIES = 1000;
/** A memory file is read back up to this (the store refuses far less: its error then names the file). */
const MAX_MEMORY_READ = 1024 * 1024;

/**
 * Files in a writable root the agent may change (a memory store's), its folders too: as root the
 * hand runs as its own uid, which must be able to replace and add files there.
 */
const modes = (root: MountRoot) => (root.readOnly ? { file: 0o444, dir: 0o755 } : { file: 0o666, dir: 0o777 });

async function mkdirMode(dir: string, mode: number): Promise<void> {
  const made = await fs.mkdir(dir, { recursive: true, mode });
  // mkdir's mode goes through the umask: the folders it made get theirs exactly.
  if (made !== undefined) for (let d = dir; d.length >= made.length; d = path.dirname(d)) await fs.chmod(d, mode);
}

async function writeSource(m: Mount, file: string, mode: number): Promise<void> {
  const tmp = `${file}.paddock-${process.pid}-${Date.now()}`;
  const s = m.source;
  if ('hostPath' in s) await fs.copyFile(s.hostPath, tmp);
  else if ('contents' in s) await fs.writeFile(tmp, s.contents);
  else await pipeline(await s.open(), (await fs.open(tmp, 'w', 0o644)).createWriteStream());
  await fs.chmod(tmp, mode);
  await fs.rename(tmp, file);
}

/** Every regular file and folder under `dir` (lstat: links are listed as links, never followed). */
async function walk(dir: string, limit: number): Promise<{ rel: string; kind: 'file' | 'dir' | 'other'; size: number; mtimeMs: number }[]> {
  const out: { rel: string; kind: 'file' | 'dir' | 'other'; size: number; mtimeMs: number }[] = [];
  const visit = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (out.length >= limit) return;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const st = await fs.lstat(path.join(dir, r)).catch(() => null);
      if (!st) continue;
      const kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
      out.push({ rel: r, kind, size: st.size, mtimeMs: st.mtimeMs });
      if (kind === 'dir') await visit(r);
    }
  };
  await visit('');
  return out;
}

/**
 * A hand's mounts in a folder on this machine (`<hand folder>/mnt`, mirroring `/mnt` in the hand):
 * the sandbox binds its roots into bubblewrap (`bindMounts`), the server writes the read-only
 * ones and reads the outputs from here. What the hand wrote is read without following any link it
 * made: a file is opened, then checked to be a regular file that really is inside the outputs folder.
 */
export class DirMountPoint implements HandMountPoint {
  /** mount path → the version written there. */
  private readonly placed = new Map<string, string>();
  /** output path → size and mtime when last seen. */
  private readonly seen = new Map<string, string>();
  /** What the last full sync placed, as one string: the same list again needs no look at the disk (only the server writes there). */
  private lastSync: string | null = null;

  constructor(readonly hostDir: string) {}

  private hostPathOf(mountPath: string): string {
    return path.join(this.hostDir, mountPath.slice(MOUNTS_ROOT.length + 1));
  }

  /** The binds for the sandbox: each root of lib/mounts.ts, from its folder here. */
  bindMounts(): BindMount[] {
    return SESSION_MOUNT_ROOTS.map((r) => ({ source: this.hostPathOf(r.mountPath), target: r.mountPath, readOnly: r.readOnly }));
  }

  async sync(mounts: readonly Mount[]): Promise<void> {
    const signature = mounts.every((m) => m.version !== undefined) ? JSON.stringify(mounts.map((m) => [m.mountPath, m.version]).sort()) : null;
    if (signature !== null && signature === this.lastSync) return;
    this.lastSync = null;
    for (const root of SESSION_MOUNT_ROOTS.filter((r) => r.placed)) {
      const dir = this.hostPathOf(root.mountPath);
      const mode = modes(root);
      await fs.mkdir(dir, { recursive: true, mode: mode.dir });
      const wanted = new Map<string, Mount>();
      for (const m of mounts) {
        const rel = underRoot(root.mountPath, m.mountPath);
        if (rel !== null && mountSegments(rel) !== null) wanted.set(rel, m);
      }
      // Gone first (a file may become a folder's name), deepest first.
      const present = (await walk(dir, Number.POSITIVE_INFINITY)).reverse();
      for (const e of present) {
        const keep = e.kind === 'file' ? wanted.has(e.rel) : [...wanted.keys()].some((w) => w.startsWith(`${e.rel}/`));
        if (keep) continue;
        await fs.rm(path.join(dir, e.rel), { recursive: true, force: true });
        this.placed.delete(`${root.mountPath}/${e.rel}`);
      }
      for (const [rel, m] of wanted) {
        const version = mountVersion(m);
        const file = path.join(dir, rel);
        if (version !== null && this.placed.get(m.mountPath) === version && (await fs.lstat(file).catch(() => null))?.isFile()) continue;
        await mkdirMode(path.dirname(file), mode.dir);
        await writeSource(m, file, mode.file);
        if (version !== null) this.placed.set(m.mountPath, version);
      }
    }
    this.lastSync = signature;
  }

  async changedOutputs(): Promise<OutputFile[]> {
    const dir = this.hostPathOf(SESSION_OUTPUTS);
    const entries = (await walk(dir, MAX_OUTPUT_ENTRIES)).filter((e) => e.kind === 'file');
    const changed: OutputFile[] = [];
    for (const e of entries) {
      const stamp = `${e.size}:${e.mtimeMs}`;
      if (this.seen.get(e.rel) === stamp) continue;
      this.seen.set(e.rel, stamp);
      changed.push({ path: e.rel, size: e.size, open: () => openInside(dir, e.rel) });
    }
    return changed;
  }

  /**
   * What the agent changed under the memory stores since they were placed: each file whose content
   * is not what was placed there (by its SHA-256), and each placed file gone. A changed path is
   * placed again at the next sync from what the store then holds (its write went back, or was refused).
   */
  async changedMemory(): Promise<MemoryChange[]> {
    const dir = this.hostPathOf(MEMORY_MOUNTS);
    const files = (await walk(dir, MAX_OUTPUT_ENTRIES)).filter((e) => e.kind === 'file');
    const changes: MemoryChange[] = [];
    const seen = new Set<string>();
    for (const e of files) {
      const mountPath = `${MEMORY_MOUNTS}/${e.rel}`;
      seen.add(mountPath);
      const content = await readInside(dir, e.rel, MAX_MEMORY_READ).catch(() => null);
      if (content === null) continue;
      const readSha256 = this.placed.get(mountPath) ?? null;
      if (createHash('sha256').update(content).digest('hex') === readSha256) continue;
      changes.push({ mountPath, content: content.toString('utf8'), readSha256 });
    }
    for (const [mountPath, sha] of this.placed) {
      if (mountPath.startsWith(`${MEMORY_MOUNTS}/`) && !seen.has(mountPath)) changes.push({ mountPath, content: null, readSha256: sha });
    }
    for (const c of changes) this.placed.delete(c.mountPath);
    if (changes.length > 0) this.lastSync = null;
    return changes;
  }
}

/** Reads `rel` under `root` (at most `max` + 1 bytes), refusing anything that is not a regular file really inside it. */
async function readInside(root: string, rel: string, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of await openInside(root, rel)) {
    chunks.push(c as Buffer);
    size += (c as Buffer).length;
    if (size > max) break;
  }
  return Buffer.concat(chunks);
}

/** What identifies a mount's bytes (no copy when unchanged); null: always written. */
function mountVersion(m: Mount): string | null {
  return m.version ?? null;
}

/** Opens `rel` under `root` for reading, refusing anything that is not a regular file really inside it. */
async function openInside(root: string, rel: string) {
  const realRoot = await fs.realpath(root);
  const handle = await fs.open(path.join(root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const real = await fs.readlink(`/proc/self/fd/${handle.fd}`);
    const st = await handle.stat();
    if (!real.startsWith(`${realRoot}/`) || !st.isFile()) throw new Error(`output ${rel} is not a file inside the outputs folder`);
    return handle.createReadStream();
  } catch (e) {
    await handle.close();
    throw e;
  }
}
