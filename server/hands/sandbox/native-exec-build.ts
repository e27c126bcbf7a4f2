import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { handBundleDir } from '~/server/hands/paddock-hand/bundle';

/**
 * The hands' resident executor (native/paddock-exec.c), compiled on first use with the machine's C
 * compiler into the hands' code folder (the one folder of ours a sandbox may read and run; the data
 * dir and ~/.cache are hidden from it), as `paddock-exec-<source hash>`: the same source gives the
 * same file, so servers share it and a running hand's binary is never rewritten. Static when the
 * toolchain can (nothing of the host's libraries needed inside), else dynamic.
 */

export const EXEC_SOURCE = ['server', 'hands', 'sandbox', 'native', 'paddock-exec.c'];

/** The compiler's words when there is none (or it failed both ways): the caller falls back to Node. */
export class NoCompilerError extends Error {}

export async function buildNativeExec(root = process.cwd(), outDir = handBundleDir(), cc = process.env.CC ?? 'gcc'): Promise<string> {
  const source = path.join(/*turbopackIgnore: true*/ root, ...EXEC_SOURCE);
  const text = await fs.readFile(source);
  const file = path.join(/*turbopackIgnore: true*/ outDir, `paddock-exec-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`);
  if (await fs.access(file).then(() => true, () => false)) return file;
  await fs.mkdir(outDir, { recursive: true, mode: 0o755 });
  const info = await fs.lstat(outDir);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) {
    throw new Error(`refusing to use ${outDir} for the hand executor: not a directory owned by this user and writable by it alone`);
  }
  const tmp = path.join(/*turbopackIgnore: true*/ outDir, `.exec-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  let said = '';
  for (const flags of [['-static'], []]) {
    const r = await run(cc, ['-O2', '-s', ...flags, '-o', tmp, source]);
    if (r.code === 0) {
      await fs.chmod(tmp, 0o755);
      await fs.rename(tmp, file);
      return file;
    }
    if (r.missing) throw new NoCompilerError(`no C compiler (${cc}) to build the hand executor`);
    said = r.stderr;
  }
  await fs.rm(tmp, { force: true });
  throw new NoCompilerError(`the hand executor did not compile: ${said.trim().slice(0, 500)}`);
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (e: NodeJS.ErrnoException) => resolve({ code: null, stderr: e.message, missing: e.code === 'ENOENT' }));
    child.once('close', (code) => resolve({ code, stderr, missing: false }));
  });
}
