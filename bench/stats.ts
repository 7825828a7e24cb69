/** Order statistics shared by the benches. */

/** The p-th percentile (nearest rank) of the values; they need not be sorted. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}
