import type { Hand } from '~/lib/hand';
import type { HandSecretLoader } from '~/server/hands/sandbox/hand-secret';

/** What a new hand should be. One variant per provisioner. */
export type ProvisionSpec =
  | { kind: 'memory' }
  | SandboxSpec
  | { kind: 'remote'; transport: 'http'; url: string; token?: string }
  | { kind: 'remote'; transport: 'stdio'; command: string; args?: string[]; cwd?: string };

/** A paddock-hand process on this machine: sandboxed, or (`local`, opt-in only) not. */
export interface SandboxSpec {
  kind: 'sandbox' | 'local';
  /** Hosts the hand may reach (exact names or `*.example.com`); empty = no network (unless unrestricted). */
  allowedDomains?: string[];
  /**
   * `unrestricted`: any public host besides `allowedDomains` (private, loopback and link-local
   * addresses only when listed there). Absent: only `allowedDomains`.
   */
  network?: 'unrestricted';
  resources?: HandResources;
  /**
   * The session's `environment_variable` secrets, loaded at each start (a resume too): the hand's
   * environment gets placeholders, its egress proxy the values. Sandbox hands only; absent = none.
   */
  secrets?: HandSecretLoader;
}

/**
 * What an agent asks of a hand's limits: it may lower the operator's (see sandbox/limits.ts),
 * never raise them. Memory binds the whole hand and each command's address space; CPU time each
 * command.
 */
export interface HandResources {
  memory_mb?: number;
  cpu_seconds?: number;
}

export type ProvisionPhase = 'starting' | 'ready' | 'failed';

export interface ProvisionOptions {
  signal: AbortSignal;
  /**
   * Work in this folder (created if missing) instead of a fresh one: how a suspended hand resumes
   * on its files. Provisioners without a local workspace ignore it.
   */
  workspace?: string;
  /** Progress for the UI: `starting` (with a detail such as "launching sandbox"), then ready or failed. */
  onProgress?: (phase: ProvisionPhase, detail?: string) => void;
  /** A warm-pool start nobody waits for: a session's own start goes first (see start-limit.ts). */
  background?: boolean;
}

/** Makes hands of one kind. A failure throws an Error whose message says what is missing. */
export interface Provisioner {
  provision(handId: string, spec: ProvisionSpec, opts: ProvisionOptions): Promise<Hand>;
}

/**
 * A hand whose process can stop while its workspace stays (a paddock-hand process on this
 * machine): the idle reaper suspends it, and provisioning again on `workspace` resumes it.
 */
export interface SuspendableHand extends Hand {
  readonly workspace: string;
  /** Stops the process and keeps the workspace (`close` removes it). */
  suspend(): Promise<void>;
  /** Takes the session's name for the hand, for its error texts (pooled hands start unnamed). */
  rename(id: string): void;
}

export function isSuspendable(hand: Hand | null): hand is SuspendableHand {
  return hand !== null && typeof (hand as Partial<SuspendableHand>).suspend === 'function' && typeof (hand as Partial<SuspendableHand>).workspace === 'string';
}
