import 'server-only';
import { Readable } from 'node:stream';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { type Mount, MEMORY_MOUNTS, mountSegments, underRoot } from '~/lib/mounts';
import { MAX_MEMORY_BYTES } from '~/lib/memory-path';
import { type TabCall, openClaimedCall } from '~/server/api/tab-result';
import type { Runtime } from '~/server/runtime';
import { logger } from '~/server/log';

const log = logger('mounts');

/**
 * A browser tab's side of the session's mounts (docs/hands.md). The server never reaches into a
 * tab, so the tab asks: for the call it holds, the manifest of mounts (path, version, read-only,
 * size) and the bytes of those it has not placed; after the call it sends what changed under
 * `/mnt/session/outputs/` (kept as the session's files) and `/mnt/memory/` (versions by the
 * session, or refusals the tab's result then names). Every request is for a call this tab holds
 * and nobody answered yet; everything the tab sends is untrusted.
 */

/** One file's bytes each way (as ExecMountPoint's copies); an output is also capped by the tRPC body limit, since it comes as base64 in one request. */
export const TAB_MOUNT_MAX_BYTES = 16 * 1024 * 1024;
/** Memory changes per request (the tab sends them a few at a time). */
export const TAB_MEMORY_BATCH = 32;

export interface TabMount {
  path: string;
  version: string;
  readOnly: boolean;
  /** Bytes; over TAB_MOUNT_MAX_BYTES the file is listed but cannot be fetched. */
  size: number;
}

/** Sizes of blobs already counted, by version (a content hash: a version's size never changes). */
const sizes = new Map<string, number>();
const SIZE_CACHE = 4096;

async function bytesOf(m: Mount, max: number): Promise<Buffer | null> {
  const s = m.source;
  if ('contents' in s) return Buffer.from(s.contents);
  if ('hostPath' in s) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of await s.open()) {
    size += c.byteLength;
    if (size > max) return null;
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

async function sizeOf(m: Mount): Promise<number> {
  if ('contents' in m.source) return Buffer.byteLength(m.source.contents);
  const known = m.version === undefined ? undefined : sizes.get(m.version);
  if (known !== undefined) return known;
  const bytes = await bytesOf(m, TAB_MOUNT_MAX_BYTES);
  const size = bytes === null ? TAB_MOUNT_MAX_BYTES + 1 : bytes.length;
  if (m.version !== undefined) {
    if (sizes.size >= SIZE_CACHE) sizes.delete(sizes.keys().next().value!);
    sizes.set(m.version, size);
  }
  return size;
}

async function sessionMountList(rt: Runtime, sessionId: string): Promise<Mount[]> {
  return rt.hands.mounts ? rt.hands.mounts.mountsFor(sessionId) : [];
}

/** The mounts the tab should hold for this call: new or changed ones it fetches, absent ones it removes. */
export async function tabMountManifest(rt: Runtime, a: TabCall): Promise<{ mounts: TabMount[] }> {
  await openClaimedCall(rt, a);
  const mounts: TabMount[] = [];
  for (const m of await sessionMountList(rt, a.sessionId)) {
    mounts.push({ path: m.mountPath, version: m.version ?? '', readOnly: m.readOnly, size: await sizeOf(m) });
  }
  return { mounts };
}

/** One mount's bytes, base64; a file past the cap is refused (the tab leaves it out and says so). */
export async function tabMountFile(rt: Runtime, a: TabCall & { path: string }): Promise<{ version: string; base64: string }> {
  await openClaimedCall(rt, a);
  const m = (await sessionMountList(rt, a.sessionId)).find((x) => x.mountPath === a.path);
  if (!m) throw new TRPCError({ code: 'NOT_FOUND', message: `${a.path} is not one of the session's mounts` });
  const bytes = await bytesOf(m, TAB_MOUNT_MAX_BYTES);
  if (bytes === null) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `${a.path} is over ${TAB_MOUNT_MAX_BYTES} bytes: a browser hand does not get it` });
  return { version: m.version ?? '', base64: bytes.toString('base64') };
}

const Base64 = z
  .string()
  .max(Math.ceil(TAB_MOUNT_MAX_BYTES / 3) * 4)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/** A path relative to `/mnt/session/outputs/`. */
const OutputPath = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => mountSegments(p) !== null, 'must be a plain path relative to /mnt/session/outputs: no empty, "." or ".." segments, NUL or backslash');

export const TabOutput = z.object({ path: OutputPath, base64: Base64 });

/** One output the agent left: kept as a file scoped to the session, named by its path. */
export async function keepTabOutput(rt: Runtime, a: TabCall & { path: string; base64: string }): Promise<{ kept: boolean }> {
  await openClaimedCall(rt, a);
  const mounts = rt.hands.mounts;
  if (!mounts) return { kept: false };
  const bytes = Buffer.from(a.base64, 'base64');
  if (bytes.length > TAB_MOUNT_MAX_BYTES) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `${a.path}: over ${TAB_MOUNT_MAX_BYTES} bytes` });
  await mounts.saveOutputs(a.sessionId, [{ path: a.path, size: bytes.length, open: () => Promise.resolve(Readable.from([bytes])) }]);
  log.info('browser tab output kept', { session: a.sessionId, hand: a.hand, path: a.path, size: bytes.length });
  return { kept: true };
}

export const TabMemoryChange = z.object({
  mountPath: z
    .string()
    .max(MEMORY_MOUNTS.length + 1 + 1024)
    .refine((p) => {
      const rel = underRoot(MEMORY_MOUNTS, p);
      return rel !== null && mountSegments(rel) !== null;
    }, `must be a plain path under ${MEMORY_MOUNTS}/`),
  /** Its text now (null: deleted). Past the store's limit it is still sent, so the refusal names the file. */
  content: z
    .string()
    .max(MAX_MEMORY_BYTES * 2)
    .nullable(),
  readSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 in hex')
    .nullable(),
});

/** The agent's changes to memory: written back as versions by the session; what was refused, one sentence each. */
export async function saveTabMemory(rt: Runtime, a: TabCall & { changes: z.infer<typeof TabMemoryChange>[] }): Promise<{ refused: string[] }> {
  await openClaimedCall(rt, a);
  const mounts = rt.hands.mounts;
  if (!mounts) return { refused: a.changes.map((c) => `${c.mountPath}: this server keeps no memory mounts`) };
  return { refused: await mounts.saveMemory(a.sessionId, a.changes) };
}
