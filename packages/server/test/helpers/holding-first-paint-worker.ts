import { isMainThread } from 'node:worker_threads';
import type { FirstPaintTask } from '../../src/console/first-paint.ts';

/**
 * The real first paint worker (TestSeams.firstPaintWorkerModule), except that the channel
 * HOLD_CHANNEL holds its thread for good, as a drawing that never ends would. It waits on an
 * Atomics cell nobody wakes rather than spinning, so it costs no CPU on a shared machine; only
 * terminating the thread ends it.
 */
export const HOLD_CHANNEL = 'ui:hold';

// The real worker imports the render module from its thread's workerData: only in the thread, not in the test that reads HOLD_CHANNEL.
const drawFirstPaintTask = isMainThread ? undefined : (await import('../../src/console/first-paint-worker.ts')).default;

export default function holdingFirstPaintTask(task: FirstPaintTask): string | undefined {
  if (new URLSearchParams(task.query).get('key') === HOLD_CHANNEL) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  return drawFirstPaintTask!(task);
}
