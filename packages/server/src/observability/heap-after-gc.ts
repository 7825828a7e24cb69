import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/**
 * The V8 heap in use right after the latest full (mark-compact) collection: the live heap, which
 * a leak makes grow. Resident memory and the current heap size say little on their own, since
 * garbage piles up between full collections and V8 sizes the heap to the allocation rate. One
 * observer for the process (the heap is the process's), started on first use.
 */
let liveHeapBytes = 0;
let observer: PerformanceObserver | undefined;

export function liveHeapAfterFullGc(): number {
  if (!observer) {
    observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) liveHeapBytes = getHeapStatistics().used_heap_size;
      }
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  return liveHeapBytes;
}
