/** What a hand's tools may take and give: the same defaults on every hand, adjustable per hand. */
export interface ToolLimits {
  /** Characters of bash output kept (head and tail); the middle is dropped with a notice. */
  outputChars: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  globResults: number;
  grepResults: number;
  /** Larger files are refused by read/edit and skipped by grep. */
  fileBytes: number;
  /** Per bash command: address-space limit (ulimit -v), 0 = none (paddock-hand only). */
  memoryMb: number;
  /** Per bash command: CPU-time limit (ulimit -t), 0 = none (paddock-hand only). */
  cpuSeconds: number;
}

export const TOOL_LIMITS: Readonly<ToolLimits> = Object.freeze({
  outputChars: 30_000,
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  globResults: 1000,
  grepResults: 500,
  fileBytes: 10 * 1024 * 1024,
  memoryMb: 0,
  cpuSeconds: 0,
});
