import { dirnamePosix, relativeInside } from '~/lib/posix-path';
import type { EntryKind, ToolFs } from '~/lib/workspace-tools/tool-fs';

const encoder = new TextEncoder();

function enoent(abs: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, '${abs}'`), { code: 'ENOENT' });
}

/**
 * A `ToolFs` over a map of files, folders implied by their paths (no symlinks, no empty folders):
 * the in-memory hand's workspace, and a filesystem the file tools' contract runs on beside a disk.
 */
export class MemoryToolFs implements ToolFs {
  private readonly files = new Map<string, Uint8Array>();

  private isDir(abs: string): boolean {
    if (abs === '/') return true;
    for (const p of this.files.keys()) if (relativeInside(abs, p)) return true;
    return false;
  }

  private entry(abs: string): { kind: EntryKind; size: number } | null {
    const bytes = this.files.get(abs);
    if (bytes) return { kind: 'file', size: bytes.byteLength };
    return this.isDir(abs) ? { kind: 'dir', size: 0 } : null;
  }

  lstat(abs: string) {
    return Promise.resolve(this.entry(abs));
  }

  stat(abs: string) {
    return Promise.resolve(this.entry(abs));
  }

  readBytes(abs: string): Promise<Uint8Array> {
    const bytes = this.files.get(abs);
    return bytes ? Promise.resolve(bytes) : Promise.reject(enoent(abs));
  }

  writeText(abs: string, content: string): Promise<void> {
    // A file in the way of a folder is the disk's ENOTDIR.
    for (let d = dirnamePosix(abs); d !== '/'; d = dirnamePosix(d)) {
      if (this.files.has(d)) return Promise.reject(Object.assign(new Error(`ENOTDIR: not a directory, '${abs}'`), { code: 'ENOTDIR' }));
    }
    this.files.set(abs, encoder.encode(content));
    return Promise.resolve();
  }

  list(abs: string): Promise<Array<{ name: string; kind: EntryKind }>> {
    const out = new Map<string, EntryKind>();
    for (const p of this.files.keys()) {
      const rel = relativeInside(abs, p);
      if (!rel) continue;
      const slash = rel.indexOf('/');
      out.set(slash < 0 ? rel : rel.slice(0, slash), slash < 0 ? 'file' : 'dir');
    }
    if (out.size === 0 && !this.isDir(abs)) return Promise.reject(enoent(abs));
    return Promise.resolve([...out].map(([name, kind]) => ({ name, kind })));
  }

  clear(): void {
    this.files.clear();
  }
}
