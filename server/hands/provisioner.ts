import type { Hand } from '~/lib/hand';

/** What a new hand should be. One variant per provisioner. */
export type ProvisionSpec =
  | { kind: 'memory' }
  | SandboxSpec
  | { kind: 'remote'; transport: 'http'; url: string; token?: string }
  | { kind: 'remote'; transport: 'stdio'; command: string; args?: string[]; cwd?: string };

/** A paddock-hand process on this machine: sandboxed, or (`local`, opt-in only) not. */
export interface SandboxSpec {
  kind: 'sandbox' | 'local';
  /** Hosts the hand may reach (exact names or `*.example.com`); empty = no network. */
  allowedDomains?: string[];
  resources?: HandResources;
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
  /** Progress for the UI: `starting` (with a detail such as "launching sandbox"), then ready or failed. */
  onProgress?: (phase: ProvisionPhase, detail?: string) => void;
}

/** Makes hands of one kind. A failure throws an Error whose message says what is missing. */
export interface Provisioner {
  provision(handId: string, spec: ProvisionSpec, opts: ProvisionOptions): Promise<Hand>;
}
