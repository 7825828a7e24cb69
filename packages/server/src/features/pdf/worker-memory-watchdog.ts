import type { Worker } from 'node:worker_threads';

interface HeapInfo {
  used_heap_size: number;
  external_memory: number;
}
type WatchedWorker = Worker & { getHeapStatistics?: () => Promise<HeapInfo> };

/** The share of the worker's cap at which the watchdog acts, well before V8's own hard limit. */
const WATCHDOG_FRACTION = 0.75;
const WATCHDOG_INTERVAL_MS = 20;

/**
 * V8's own cap (resourceLimits) ends a worker that passes it, but a large allocation right at
 * the limit makes V8 abort the whole process instead. So the heap (V8 heap plus external buffers,
 * where a WASM engine's memory is) of the worker running a task is polled, and `exceeded` is
 * called once it passes WATCHDOG_FRACTION of the cap, so the worker is terminated cleanly from
 * outside. Answers the interval, for `clearInterval` when the task ends.
 */
export function watchWorkerMemory(findWorker: () => Worker | undefined, capBytes: number, exceeded: () => void): NodeJS.Timeout {
  const softLimit = capBytes * WATCHDOG_FRACTION;
  let checking = false;
  const interval = setInterval(() => {
    if (checking) return;
    const worker = findWorker() as WatchedWorker | undefined;
    if (!worker?.getHeapStatistics) return;
    checking = true;
    worker
      .getHeapStatistics()
      .then((stats) => {
        if (stats.used_heap_size + stats.external_memory > softLimit) exceeded();
      })
      .catch(() => {})
      .finally(() => {
        checking = false;
      });
  }, WATCHDOG_INTERVAL_MS);
  interval.unref();
  return interval;
}
