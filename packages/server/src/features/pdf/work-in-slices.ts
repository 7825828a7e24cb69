import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Linear work over a 16 MiB caller document still takes seconds, so it is written as a generator
 * that yields every few thousand steps, and run here in slices of a few milliseconds with a turn
 * of the event loop between them: other callers wait one slice at most, never the whole document.
 */
export type Steps<T> = Generator<void, T, void>;

const SLICE_MS = 8;

export function runToEnd<T>(steps: Steps<T>): T {
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

export async function runInSlices<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const sliceEnd = performance.now() + SLICE_MS;
    let step = steps.next();
    while (!step.done && performance.now() < sliceEnd) step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
    signal?.throwIfAborted();
  }
}
