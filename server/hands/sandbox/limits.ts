import type { HandLimits } from '~/lib/hand-limits';
import type { HandResources } from '~/server/hands/provisioner';


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
