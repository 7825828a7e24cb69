/**
 * A small closed-loop load generator: `concurrency` callers each send the next request as soon
 * as the previous one is answered, for `durationMs`. Shared by the benches so every figure is
 * measured the same way.
 */
export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  latenciesMs: number[];
}

export async function runLoad(send: () => Promise<void>, options: { concurrency: number; durationMs: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const begun = performance.now();
      await send();
      latencies.push(performance.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { requests: latencies.length, seconds, perSecond: latencies.length / seconds, latenciesMs: latencies };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}
