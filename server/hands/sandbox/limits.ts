import type { HandResources } from '~/server/hands/provisioner';

/**
 * The bounds every sandbox hand gets, whatever the agent asks for: the operator's settings
 * (`PADDOCK_HAND_*`). The process count, memory and file size bind the whole hand (cgroup and
 * hard rlimits); memory (as address space) and CPU time also bind each bash command.
 */
export interface HandLimits {
  maxProcs: number;
  memoryMb: number;
  fileSizeMb: number;
  cpuSeconds: number;
}

export const DEFAULT_HAND_LIMITS: HandLimits = { maxProcs: 256, memoryMb: 2048, fileSizeMb: 1024, cpuSeconds: 600 };

/**
 * An agent's `resources` may lower the operator's limits, never raise them: the operator's figure
 * is what the machine was sized for. (0 in the operator's settings means no limit.)
 */
export function effectiveLimits(operator: HandLimits, asked: HandResources | undefined): HandLimits {
  const lower = (max: number, want: number | undefined) => (want === undefined ? max : max === 0 ? want : Math.min(max, want));
  return {
    ...operator,
    memoryMb: lower(operator.memoryMb, asked?.memory_mb),
    cpuSeconds: lower(operator.cpuSeconds, asked?.cpu_seconds),
  };
}
