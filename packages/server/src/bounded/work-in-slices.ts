/**
 * The rule above the others (DESIGN, "Bounded work"): work whose cost a caller controls is linear
 * in its input and capped at the contract's sizes, or it runs off the main thread under a
 * deadline. No caller input may hold the event loop for more than 100 ms; the stall suite
 * (test/stall-suite.test.ts, `pnpm test:stall`) checks every route of the contract for it.
 * - Linear work over large input runs here, in slices with a turn of the event loop between them.
 * - Work that cannot be made linear or cheap (PDF and DOCX parsing, JSON Schema validation,
 *   calculate, building the discovery documents) runs in worker threads named in
 *   worker-modules.ts, each under a deadline and a heap cap.
 * - Regular expressions over caller text are checked for super-linear backtracking in CI
 *   (`pnpm lint:regex`); caller-supplied patterns compile with RE2.
 */
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

/**
 * A turn of the whole event loop, its timers included. An immediate queued from I/O (a worker's
 * message, a request's last chunk) runs in the same iteration, before any timer: two costly
 * steps with only `setImmediate` between them hold the loop as one.
 */
export async function yieldToLoop(): Promise<void> {
  await nextTurn();
  await nextTurn();
}
