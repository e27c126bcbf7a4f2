import 'client-only';
import type { EngineMounts } from '~/lib/browser/engine/types';
import type { TrpcClient } from '~/lib/browser/trpc';

/**
 * The tab's side of the session's mounts (server/api/tab-mounts.ts): before a call it holds, the
 * mounts the server lists are placed in the engine (only those whose version it lacks are
 * fetched); after it, new or changed outputs go back one request each, and memory changes in small
 * batches, whose refusals the result then names. Neither step stops the call: a fault is a note
 * in the terminal, and the next call tries again.
 */

/** What every request about the call carries. */
export interface TabCallRef {
  sessionId: string;
  hand: string;
  tabId: string;
  tabSecret: string;
  toolUseId: string;
}

/** Memory changes per request, and their text per request: well under the tRPC body limit (2 MB by default). */
const MEMORY_BATCH = 32;
const MEMORY_BATCH_CHARS = 512 * 1024;
/** The server gives no mount past this (16 MB); the tab does not ask. */
const MAX_MOUNT_BYTES = 16 * 1024 * 1024;

function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Places the session's mounts for this call; returns notes on what could not be placed. */
export async function placeMounts(client: TrpcClient, call: TabCallRef, engine: EngineMounts): Promise<string[]> {
  const notes: string[] = [];
  try {
    const { mounts } = await client.hands.mounts.query(call);
    const entries = mounts.map((m) => ({ mountPath: m.path, version: m.version, readOnly: m.readOnly, size: m.size }));
    const need = new Set(await engine.plan(entries));
    for (const m of entries) {
      if (!need.has(m.mountPath)) continue;
      if (m.size > MAX_MOUNT_BYTES) {
        notes.push(`${m.mountPath}: over ${MAX_MOUNT_BYTES} bytes, not placed in this tab`);
        continue;
      }
      try {
        const { version, base64 } = await client.hands.mountFile.query({ ...call, path: m.mountPath });
        await engine.place({ mountPath: m.mountPath, version, readOnly: m.readOnly }, fromBase64(base64));
      } catch (e) {
        notes.push(`${m.mountPath}: not placed (${messageOf(e)})`);
      }
    }
  } catch (e) {
    notes.push(`the session's mounts were not placed (${messageOf(e)})`);
  }
  return notes;
}

/** Sends what the call changed; returns the refused memory changes (one sentence each) and notes. */
export async function giveBackMounts(client: TrpcClient, call: TabCallRef, engine: EngineMounts): Promise<{ refused: string[]; notes: string[] }> {
  const refused: string[] = [];
  let changes;
  try {
    changes = await engine.changes();
  } catch (e) {
    return { refused: [`the memory folder could not be read back; nothing of it was saved (${messageOf(e)})`], notes: [] };
  }
  const notes = [...changes.skipped];
  for (const o of changes.outputs) {
    await client.hands.keepOutput.mutate({ ...call, path: o.path, base64: toBase64(o.bytes) }).catch((e: unknown) => notes.push(`/mnt/session/outputs/${o.path}: not kept (${messageOf(e)})`));
  }
  let batch: typeof changes.memory = [];
  let chars = 0;
  const send = async () => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    chars = 0;
    try {
      refused.push(...(await client.hands.saveMemory.mutate({ ...call, changes: sent })).refused);
    } catch (e) {
      refused.push(...sent.map((c) => `${c.mountPath}: could not be sent (${messageOf(e)})`));
    }
  };
  for (const c of changes.memory) {
    const size = c.content?.length ?? 0;
    if (batch.length >= MEMORY_BATCH || (batch.length > 0 && chars + size > MEMORY_BATCH_CHARS)) await send();
    batch.push(c);
    chars += size;
  }
  await send();
  return { refused, notes };
}
