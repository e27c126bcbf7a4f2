import type { Readable } from 'node:stream';
import type { Hand } from '~/lib/hand';
import type { Mount } from '~/lib/mounts';

/** A file the agent left under `/mnt/session/outputs/`, as its hand offers it. */
export interface OutputFile {
  /** Relative to the outputs folder (`report/summary.md`). */
  path: string;
  size: number;
  /** Its bytes; refuses (throws) what is not a regular file inside the outputs folder any more. */
  open(): Promise<Readable>;
}

/** A file the agent changed under `/mnt/memory/` during a call. */
export interface MemoryChange {
  /** Its path in the hand (`/mnt/memory/<store>/<path>`). */
  mountPath: string;
  /** Its text now; null: the agent deleted it. */
  content: string | null;
  /** The SHA-256 of what the hand was given there before the call; null: nothing was. */
  readSha256: string | null;
}

/**
 * Where one hand keeps its mounts (lib/mounts.ts): each hand kind that can carry them has one
 * (a sandbox: host folders bound into bubblewrap).
 */
export interface HandMountPoint {
  /** Makes the hand's read-only mounts exactly `mounts`: new and changed ones written, gone ones removed. */
  sync(mounts: readonly Mount[]): Promise<void>;
  /** The outputs that are new or changed since the last look. */
  changedOutputs(): Promise<OutputFile[]>;
  /** What the agent changed under the memory stores since they were placed (absent: a hand kind that does not give them back). */
  changedMemory?(): Promise<MemoryChange[]>;
}

export function mountPointOf(hand: Hand): HandMountPoint | null {
  return (hand as Partial<{ mountPoint: HandMountPoint }>).mountPoint ?? null;
}

/** What the registry asks of the session's side (server/commands/session-mounts.ts). */
export interface SessionMounts {
  /** The session's mounts now (its file resources; later its memory stores and skills). */
  mountsFor(sessionId: string): Promise<Mount[]>;
  /** Keeps outputs as Files API files scoped to the session. */
  saveOutputs(sessionId: string, files: readonly OutputFile[]): Promise<void>;
  /** Writes the agent's memory changes back as versions by the session; what was refused, one sentence each. */
  saveMemory(sessionId: string, changes: readonly MemoryChange[]): Promise<string[]>;
}
