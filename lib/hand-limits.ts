/**
 * The bounds every sandbox hand gets, whatever the agent asks for: the operator's settings
 * (`PADDOCK_HAND_*`, read by server/config.ts). The process count, memory and file size bind the
 * whole hand (cgroup and hard rlimits); memory (as address space) and CPU time also bind each
 * bash command.
 */
export interface HandLimits {
  maxProcs: number;
  memoryMb: number;
  fileSizeMb: number;
  cpuSeconds: number;
}

export const DEFAULT_HAND_LIMITS: HandLimits = { maxProcs: 256, memoryMb: 2048, fileSizeMb: 1024, cpuSeconds: 600 };
