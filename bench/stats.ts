/** Small, dependency-free statistics for the benchmark. All inputs are milliseconds or counts. */

/**
 * The p-th percentile (0 < p ≤ 100) by the nearest-rank method: the smallest sample with at least
 * p% of the samples at or below it. Always an observed value, never an interpolation.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile: no samples');
  if (!(p > 0 && p <= 100)) throw new Error(`percentile: p must be in (0, 100], got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function mean(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('mean: no samples');
  return samples.reduce((sum, x) => sum + x, 0) / samples.length;
}

export function max(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('max: no samples');
  return samples.reduce((m, x) => (x > m ? x : m), -Infinity);
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  return { n: samples.length, p50: percentile(samples, 50), p99: percentile(samples, 99), mean: mean(samples), max: max(samples) };
}

/** Events per second for `count` events done in `elapsedMs`. */
export function ratePerSecond(count: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (count * 1000) / elapsedMs : Infinity;
}
