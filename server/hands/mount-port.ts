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

/**
 * Where one hand keeps its mounts (lib/mounts.ts): each hand kind that can carry them has one
 * (a sandbox: host folders bound into bubblewrap).
 */
export interface HandMountPoint {
  /** Makes the hand's read-only mounts exactly `mounts`: new and changed ones written, gone ones removed. */
  sync(mounts: readonly Mount[]): Promise<void>;
  /** The outputs that are new or changed since the last look. */
  changedOutputs(): Promise<OutputFile[]>;
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
}
