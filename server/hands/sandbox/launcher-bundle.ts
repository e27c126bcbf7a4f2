import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildBundle } from '~/server/hands/paddock-hand/bundle';

/**
 * The sandbox launcher as one prebuilt file, sandbox-runtime included: a launcher starts per hand,
 * and loading the runtime's ~200 modules through tsx took most of a hand's cold start and a third
 * of its memory. The runtime finds its helper binaries (apply-seccomp, the JVM proxy agent) in a
 * `vendor/` folder next to its bundle, copied there once.
 */
export async function buildLauncherBundle(root = process.cwd()): Promise<string> {
  const outDir = path.join(/*turbopackIgnore: true*/ root, 'node_modules', '.cache', 'paddock-launcher');
  const file = await buildBundle(root, path.join(/*turbopackIgnore: true*/ root, 'server', 'hands', 'sandbox', 'launcher.ts'), outDir, 'sandbox-launcher');
  const vendor = path.join(/*turbopackIgnore: true*/ root, 'node_modules', '@anthropic-ai', 'sandbox-runtime', 'vendor');
  const dest = path.join(/*turbopackIgnore: true*/ outDir, 'vendor');
  // Copied once, then left alone: rewriting apply-seccomp in place while another hand executes it
  // would fail (ETXTBSY) or corrupt it. A copy made aside and renamed in is all-or-nothing.
  if (!existsSync(dest)) {
    const tmp = path.join(/*turbopackIgnore: true*/ outDir, `.vendor-${process.pid}-${Math.random().toString(36).slice(2)}`);
    for (const part of ['seccomp', 'java-proxy-agent']) {
      await fs.cp(path.join(/*turbopackIgnore: true*/ vendor, part), path.join(/*turbopackIgnore: true*/ tmp, part), { recursive: true });
    }
    await fs.rename(tmp, dest).catch(() => fs.rm(tmp, { recursive: true, force: true }));
  }
  return file;
}
