import type { Dirent, Stats } from 'node:fs';
import { lstat, mkdir, readFile, readdir, readlink, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type EntryShape, isSandboxMask, SANDBOX_MASKED_NAMES } from '~/lib/sandbox-masks';
import { errnoOf, type EntryKind, type ToolFs } from '~/lib/workspace-tools/tool-fs';

function kindOf(s: Stats | Dirent): EntryKind {
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isDirectory()) return 'dir';
  return s.isFile() ? 'file' : 'other';
}

/** Absent (null) rather than an error: the file tools word "no such file" themselves. */
async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/**
 * paddock-hand's disk as the file tools' `ToolFs`. Listing the workspace's top level leaves out
 * the sandbox runtime's empty placeholders (`lib/sandbox-masks.ts`), so the agent's glob and grep
 * skip them too: they are not its files, and writing them fails anyway.
 */
export function nodeToolFs(root: string): ToolFs {
  async function isMask(dir: string, entry: Dirent): Promise<boolean> {
    if (dir !== root || !SANDBOX_MASKED_NAMES.has(entry.name)) return false;
    const abs = path.join(dir, entry.name);
    try {
      const shape: EntryShape = entry.isDirectory() ? { kind: 'directory', entries: (await readdir(abs)).length } : { kind: 'file', size: (await lstat(abs)).size };
      return isSandboxMask(entry.name, shape);
    } catch {
      return false;
    }
  }
  return {
    lstat: async (abs) => {
      const s = await orNull(lstat(abs));
      return s && { kind: kindOf(s), size: s.size };
    },
    stat: async (abs) => {
      const s = await orNull(stat(abs));
      return s && { kind: kindOf(s), size: s.size };
    },
    readBytes: (abs) => readFile(abs),
    writeText: async (abs, content) => {
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, content);
    },
    list: async (abs) => {
      const out: Array<{ name: string; kind: EntryKind }> = [];
      for (const entry of await readdir(abs, { withFileTypes: true })) {
        if (!(await isMask(abs, entry))) out.push({ name: entry.name, kind: kindOf(entry) });
      }
      return out;
    },
    realpath: (abs) => realpath(abs),
    readlink: (abs) => readlink(abs),
  };
}
