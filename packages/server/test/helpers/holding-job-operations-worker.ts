import jobOperationTask, { type JobOperationTask } from '../../src/features/jobs/operations/job-operations-worker.ts';

/**
 * The real job operations worker (TestSeams.jobOperationsWorkerModule), except that a calculate
 * item whose expression is HOLD_EXPRESSION holds its thread for good, as an evaluation that never
 * ends would. It waits on an Atomics cell nobody wakes rather than spinning, so it costs no CPU
 * on a shared machine; only terminating the thread ends it.
 */
export const HOLD_EXPRESSION = 'hold';

export default async function holdingJobOperationTask(task: JobOperationTask): Promise<unknown> {
  if (task.operation === 'calculate' && task.expression === HOLD_EXPRESSION) {
    // Running, as far as the pool knows: the item's own deadline applies, as to a real evaluation.
    task.started?.postMessage('start');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  return jobOperationTask(task);
}
