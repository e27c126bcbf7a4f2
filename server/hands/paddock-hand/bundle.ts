import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * paddock-hand as one prebuilt ES module file, built with esbuild from the source on first use.
 * A sandboxed hand runs this file and nothing else of the project, so the project folder (source,
 * `.env*`, node_modules, data) can stay hidden from it; and one parsed file with no TypeScript
 * loader starts faster and takes about half the memory of the tsx-run source.
 */

/** Where bundles go: outside the project; hands get this folder read-only. */
export function handBundleDir(): string {
  return path.join(/*turbopackIgnore: true*/ os.tmpdir(), 'paddock-hand-dist');
}

/**
 * Builds paddock-hand's bundle (async: never a sync child process next to a sandbox proxy) and
 * returns its path, `paddock-hand-<content hash>.mjs`: the same source gives the same file, so
 * concurrent servers and restarts share it and an old file is never rewritten under a running hand.
 */
export async function buildHandBundle(root = process.cwd(), outDir = handBundleDir()): Promise<string> {
  await fs.mkdir(outDir, { recursive: true, mode: 0o755 });
  // The folder is in the shared tmp dir: one another user made (or could write to) could hand
  // every sandbox a program of theirs.
  const info = await fs.lstat(outDir);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) {
    throw new Error(`refusing to use ${outDir} for paddock-hand's code: not a directory owned by this user and writable by it alone`);
  }
  return buildBundle(root, handEntry(root), outDir, 'paddock-hand');
}

const handEntry = (root: string) => path.join(/*turbopackIgnore: true*/ root, 'server', 'hands', 'paddock-hand', 'cli.ts');

/**
 * paddock-hand as a V8 startup snapshot: the bundle's modules loaded once, here, and each hand
 * started from that heap (`node --snapshot-blob B -- ARGS`). Loading the bundle (parsing, its
 * top-level code, the garbage collections on the way) was ~100 ms of CPU per hand; a restored heap
 * is a few ms, and smaller. The snapshot is built with an empty environment, so nothing of the
 * server's (a key, a token) can be in a heap every hand reads. A blob fits one Node binary only:
 * its name carries the bundle's hash and the binary's version and path.
 */
export async function buildHandSnapshot(root = process.cwd(), outDir = handBundleDir()): Promise<string> {
  await buildHandBundle(root, outDir); // the folder's checks, and the ES module file remote hands run
  const script = await buildBundle(root, handEntry(root), outDir, 'paddock-hand', 'cjs');
  const node = createHash('sha256').update(`${process.version} ${process.execPath}`).digest('hex').slice(0, 8);
  const blob = script.replace(/\.cjs$/, `-${node}.blob`);
  if (await exists(blob)) return blob;
  const tmp = path.join(/*turbopackIgnore: true*/ outDir, `.snapshot-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.blob`);
  const child = spawn(process.execPath, ['--snapshot-blob', tmp, '--build-snapshot', script], {
    cwd: outDir,
    env: cleanBuildEnv() as NodeJS.ProcessEnv, // a cast: Next's types make NODE_ENV required; a clean env has none
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', resolve);
  });
  if (code !== 0) {
    await fs.rm(tmp, { force: true });
    throw new Error(`could not build paddock-hand's startup snapshot (exit ${code}): ${stderr.trim()}`);
  }
  await fs.chmod(tmp, 0o644);
  await fs.rename(tmp, blob);
  return blob;
}

/** The snapshot builder's whole environment: nothing of the server's goes into the heap. */
function cleanBuildEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin' };
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

/** esbuild `entry` (and everything it imports) into `outDir/<name>-<hash>.mjs` (or `.cjs`, a snapshot's script). */
export async function buildBundle(root: string, entry: string, outDir: string, name: string, format: 'esm' | 'cjs' = 'esm'): Promise<string> {
  const ext = format === 'esm' ? 'mjs' : 'cjs';
  await fs.mkdir(outDir, { recursive: true, mode: 0o755 });
  const tmp = path.join(/*turbopackIgnore: true*/ outDir, `.build-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.${ext}`);
  const esbuild = path.join(/*turbopackIgnore: true*/ root, 'node_modules', 'esbuild', 'bin', 'esbuild');
  const args = [
    esbuild,
    entry,
    '--bundle',
    '--platform=node',
    `--format=${format}`,
    '--target=node20',
    '--minify',
    '--legal-comments=none',
    '--log-level=error',
    `--tsconfig=${path.join(/*turbopackIgnore: true*/ root, 'tsconfig.json')}`,
    // CommonJS dependencies inside an ES module still call require() for Node's built-ins.
    ...(format === 'esm' ? ["--banner:js=import{createRequire as __paddockRequire}from'node:module';const require=__paddockRequire(import.meta.url);"] : []),
    `--outfile=${tmp}`,
  ];
  // esbuild's install step may have replaced its JS launcher with the native binary: run either.
  const native = (await firstBytes(esbuild, 4)) === '\x7fELF';
  const child = native ? spawn(esbuild, args.slice(1), { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', resolve);
  });
  if (code !== 0) {
    await fs.rm(tmp, { force: true });
    throw new Error(`could not build ${name} (esbuild exit ${code}): ${stderr.trim()}`);
  }
  const text = await fs.readFile(tmp);
  const file = path.join(/*turbopackIgnore: true*/ outDir, `${name}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.${ext}`);
  await fs.chmod(tmp, 0o644);
  await fs.rename(tmp, file);
  return file;
}

async function firstBytes(file: string, n: number): Promise<string> {
  const h = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await h.read(Buffer.alloc(n), 0, n, 0);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await h.close();
  }
}
