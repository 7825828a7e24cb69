import jobOperationTask from '../../src/features/jobs/operations/job-operations-worker.ts';

/**
 * The real job operations worker (TestSeams.jobOperationsWorkerModule), except that each thread
 * takes longer to start than a calculate item's whole deadline, as a cold thread loading mathjs
 * can on a machine under heavy load. It waits on an Atomics cell rather than spinning, so it
 * costs no CPU.
 */
export const SLOW_START_MS = 16_000;
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SLOW_START_MS);

export default jobOperationTask;
