import 'client-only';
import type { IFileSystem } from 'just-bash/browser';
import { dirnamePosix, joinPosix, resolvePosix } from '~/lib/posix-path';

/**
 * A synchronous copy of the shell's filesystem for one `node` run. QuickJS's sync build cannot
 * await the shell's (async) InMemoryFs, so the files are copied in before the script starts
 * (cheap: the shell's file contents are shared, not duplicated, until written) and whatever the
 * script changed is written back afterwards, or before it runs a shell command.
 */

export type VNode =
  | { kind: 'file'; data: Uint8Array; mode: number; mtimeMs: number; ino: number }
  | { kind: 'dir'; mode: number; mtimeMs: number; ino: number }
  | { kind: 'symlink'; target: string; mtimeMs: number; ino: number };

const MESSAGES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  ENOTDIR: 'not a directory',
  EISDIR: 'illegal operation on a directory',
  ENOTEMPTY: 'directory not empty',
  EINVAL: 'invalid argument',
  ELOOP: 'too many symbolic links encountered',
  EPERM: 'operation not permitted',
};

/** A Node-shaped fs error: `ENOENT: no such file or directory, open '/x'`. */
export class VfsError extends Error {
  constructor(
    readonly code: string,
    readonly syscall: string,
    readonly path: string,
    readonly dest?: string,
  ) {
    super(`${code}: ${MESSAGES[code] ?? 'error'}, ${syscall} '${path}'${dest === undefined ? '' : ` -> '${dest}'`}`);
  }
}

/** Paths not copied: the shell's command stubs and its pseudo-files. */
const SKIP_PREFIXES = ['/proc/', '/dev/', '/bin/', '/usr/bin/', '/sys/'];

export class Vfs {
  private readonly nodes = new Map<string, VNode>();
  /** Paths created, changed or removed since the copy (or the last flush). */
  private readonly dirty = new Set<string>();
  private nextIno = 1;

  static async load(fs: IFileSystem): Promise<Vfs> {
    const vfs = new Vfs();
    await vfs.copyFrom(fs);
    return vfs;
  }

  private async copyFrom(fs: IFileSystem): Promise<void> {
    this.nodes.clear();
    this.nodes.set('/', { kind: 'dir', mode: 0o755, mtimeMs: Date.now(), ino: this.nextIno++ });
    for (const p of fs.getAllPaths()) {
      if (p === '/' || SKIP_PREFIXES.some((s) => p.startsWith(s))) continue;
      try {
        const st = await fs.lstat(p);
        const base = { mtimeMs: st.mtime.getTime(), ino: this.nextIno++ };
        if (st.isSymbolicLink) this.nodes.set(p, { kind: 'symlink', target: await fs.readlink(p), ...base });
        else if (st.isDirectory) this.nodes.set(p, { kind: 'dir', mode: st.mode, ...base });
        else if (st.isFile) this.nodes.set(p, { kind: 'file', data: await fs.readFileBuffer(p), mode: st.mode, ...base });
      } catch {
        // removed while we copied: skip it
      }
    }
  }

  /** Writes every change back to the shell's filesystem (removals deepest first, then creations). */
  async flushTo(fs: IFileSystem): Promise<boolean> {
    if (this.dirty.size === 0) return false;
    const paths = [...this.dirty].sort();
    this.dirty.clear();
    for (const p of [...paths].reverse()) {
      const node = this.nodes.get(p);
      const there = await fs.lstat(p).catch(() => null);
      if (there === null) continue;
      const sameKind = node && (node.kind === 'dir' ? there.isDirectory : node.kind === 'file' ? there.isFile : there.isSymbolicLink);
      if (!sameKind) await fs.rm(p, { recursive: true, force: true });
    }
    for (const p of paths) {
      const node = this.nodes.get(p);
      if (!node) continue;
      if (node.kind === 'dir') await fs.mkdir(p, { recursive: true });
      else if (node.kind === 'symlink') {
        if (await fs.exists(p).catch(() => false)) await fs.rm(p, { force: true });
        await fs.symlink(node.target, p);
      } else {
        await fs.mkdir(dirnamePosix(p), { recursive: true });
        await fs.writeFile(p, node.data);
        if (node.mode !== 0o644) await fs.chmod(p, node.mode);
      }
    }
    return true;
  }

  /**
   * After a shell command ran: take its changes. Ours were flushed before it started; any the
   * script made while it ran are still dirty and win.
   */
  async reloadFrom(fs: IFileSystem): Promise<void> {
    const mine = [...this.dirty].map((p) => [p, this.nodes.get(p)] as const);
    await this.copyFrom(fs);
    for (const [p, node] of mine) {
      if (node) this.nodes.set(p, node);
      else this.nodes.delete(p);
    }
  }

  // ── path resolution ──────────────────────────────────────────────────────

  /** Absolute path with symlinks resolved (the last one only when `followLast`). */
  real(p: string, followLast: boolean, syscall: string): string {
    let hops = 0;
    const parts = resolvePosix('/', p).split('/').filter(Boolean);
    let cur = '/';
    for (let i = 0; i < parts.length; i++) {
      const next = joinPosix(cur, parts[i]!);
      const node = this.nodes.get(next);
      const last = i === parts.length - 1;
      if (node?.kind === 'symlink' && (!last || followLast)) {
        if (++hops > 40) throw new VfsError('ELOOP', syscall, p);
        const target = resolvePosix(cur, node.target);
        const rest = parts.slice(i + 1);
        parts.splice(0, parts.length, ...target.split('/').filter(Boolean), ...rest);
        cur = '/';
        i = -1;
        continue;
      }
      if (!last && node !== undefined && node.kind !== 'dir') throw new VfsError('ENOTDIR', syscall, p);
      cur = next;
    }
    return cur;
  }

  lookup(p: string, follow: boolean, syscall: string): { abs: string; node: VNode } {
    const abs = this.real(p, follow, syscall);
    const node = this.nodes.get(abs);
    if (!node) throw new VfsError('ENOENT', syscall, p);
    return { abs, node };
  }

  tryStat(p: string): VNode | null {
    try {
      return this.lookup(p, true, 'stat').node;
    } catch {
      return null;
    }
  }

  // ── operations (paths are absolute) ──────────────────────────────────────

  readFile(p: string): Uint8Array {
    const { node } = this.lookup(p, true, 'open');
    if (node.kind !== 'file') throw new VfsError('EISDIR', 'read', p);
    return node.data;
  }

  writeFile(p: string, data: Uint8Array, opts: { append?: boolean; exclusive?: boolean; mode?: number }): void {
    const abs = this.real(p, true, 'open');
    const existing = this.nodes.get(abs);
    if (existing?.kind === 'dir') throw new VfsError('EISDIR', 'open', p);
    if (existing && opts.exclusive) throw new VfsError('EEXIST', 'open', p);
    this.parentDir(abs, 'open', p);
    const prev = existing?.kind === 'file' ? existing : null;
    let content = data;
    if (opts.append && prev) {
      content = new Uint8Array(prev.data.byteLength + data.byteLength);
      content.set(prev.data);
      content.set(data, prev.data.byteLength);
    }
    this.set(abs, { kind: 'file', data: content, mode: prev?.mode ?? opts.mode ?? 0o644, mtimeMs: Date.now(), ino: prev?.ino ?? this.nextIno++ });
  }

  mkdir(p: string, recursive: boolean): string | undefined {
    const abs = this.real(p, true, 'mkdir');
    const existing = this.nodes.get(abs);
    if (existing) {
      if (recursive && existing.kind === 'dir') return undefined;
      throw new VfsError('EEXIST', 'mkdir', p);
    }
    const parent = dirnamePosix(abs);
    let first: string | undefined;
    if (!this.nodes.has(parent)) {
      if (!recursive) throw new VfsError('ENOENT', 'mkdir', p);
      first = this.mkdir(parent, true);
    } else if (this.nodes.get(parent)?.kind !== 'dir') throw new VfsError('ENOTDIR', 'mkdir', p);
    this.set(abs, { kind: 'dir', mode: 0o755, mtimeMs: Date.now(), ino: this.nextIno++ });
    return first ?? abs;
  }

  readdir(p: string): Array<{ name: string; kind: VNode['kind'] }> {
    const { abs, node } = this.lookup(p, true, 'scandir');
    if (node.kind !== 'dir') throw new VfsError('ENOTDIR', 'scandir', p);
    const prefix = abs === '/' ? '/' : `${abs}/`;
    const out: Array<{ name: string; kind: VNode['kind'] }> = [];
    for (const [path, child] of this.nodes) {
      if (path.startsWith(prefix) && path !== abs && !path.slice(prefix.length).includes('/')) {
        out.push({ name: path.slice(prefix.length), kind: child.kind });
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  rm(p: string, opts: { recursive?: boolean; force?: boolean; dirOnly?: boolean; fileOnly?: boolean }, syscall = 'rm'): void {
    let abs: string;
    let node: VNode;
    try {
      ({ abs, node } = this.lookup(p, false, syscall));
    } catch (e) {
      if (opts.force && e instanceof VfsError && e.code === 'ENOENT') return;
      throw e;
    }
    if (opts.dirOnly && node.kind !== 'dir') throw new VfsError('ENOTDIR', syscall, p);
    if (opts.fileOnly && node.kind === 'dir') throw new VfsError('EISDIR', syscall, p);
    if (node.kind === 'dir') {
      if (syscall === 'rm' && !opts.recursive) throw new VfsError('EISDIR', syscall, p);
      const children = this.readdir(abs);
      if (children.length > 0 && !opts.recursive) throw new VfsError('ENOTEMPTY', syscall, p);
      for (const c of children) this.rm(joinPosix(abs, c.name), { recursive: true }, syscall);
    }
    this.delete(abs);
  }

  rename(from: string, to: string): void {
    const src = this.lookup(from, false, 'rename').abs;
    const dest = this.real(to, false, 'rename');
    if (src === dest) return;
    if (dest.startsWith(`${src}/`)) throw new VfsError('EINVAL', 'rename', from, to);
    this.parentDir(dest, 'rename', to);
    const existing = this.nodes.get(dest);
    if (existing?.kind === 'dir') {
      if (this.readdir(dest).length > 0) throw new VfsError('ENOTEMPTY', 'rename', from, to);
    }
    if (existing) this.delete(dest);
    const moved = [...this.nodes.entries()].filter(([k]) => k === src || k.startsWith(`${src}/`));
    for (const [k] of moved) this.delete(k);
    for (const [k, v] of moved) this.set(dest + k.slice(src.length), v);
  }

  copy(from: string, to: string, opts: { recursive?: boolean; exclusive?: boolean }): void {
    const { node } = this.lookup(from, true, 'copyfile');
    if (node.kind === 'dir') {
      if (!opts.recursive) throw new VfsError('EISDIR', 'cp', from);
      this.mkdir(to, true);
      for (const c of this.readdir(from)) this.copy(joinPosix(from, c.name), joinPosix(to, c.name), opts);
      return;
    }
    if (node.kind !== 'file') return;
    if (opts.exclusive && this.tryStat(to)) throw new VfsError('EEXIST', 'copyfile', from, to);
    this.writeFile(to, node.data, { mode: node.mode });
  }

  symlink(target: string, p: string): void {
    const abs = this.real(p, false, 'symlink');
    if (this.nodes.has(abs)) throw new VfsError('EEXIST', 'symlink', target, p);
    this.parentDir(abs, 'symlink', p);
    this.set(abs, { kind: 'symlink', target, mtimeMs: Date.now(), ino: this.nextIno++ });
  }

  readlink(p: string): string {
    const { node } = this.lookup(p, false, 'readlink');
    if (node.kind !== 'symlink') throw new VfsError('EINVAL', 'readlink', p);
    return node.target;
  }

  chmod(p: string, mode: number): void {
    const { abs, node } = this.lookup(p, true, 'chmod');
    if (node.kind !== 'symlink') this.set(abs, { ...node, mode });
  }

  utimes(p: string, mtimeMs: number): void {
    const { abs, node } = this.lookup(p, true, 'utime');
    this.set(abs, { ...node, mtimeMs });
  }

  mkdtemp(template: string): string {
    const prefix = template.slice(0, -6);
    for (;;) {
      const candidate = prefix + Math.random().toString(36).slice(2, 8).padEnd(6, '0');
      if (!this.nodes.has(candidate)) {
        this.mkdir(candidate, false);
        return candidate;
      }
    }
  }

  private parentDir(abs: string, syscall: string, p: string): void {
    const parent = this.nodes.get(dirnamePosix(abs));
    if (!parent) throw new VfsError('ENOENT', syscall, p);
    if (parent.kind !== 'dir') throw new VfsError('ENOTDIR', syscall, p);
  }

  private set(abs: string, node: VNode): void {
    this.nodes.set(abs, node);
    this.dirty.add(abs);
  }

  private delete(abs: string): void {
    this.nodes.delete(abs);
    this.dirty.add(abs);
  }
}
