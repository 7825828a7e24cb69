/**
 * calculate runs in the job operations worker under a deadline (jobLimits.calculateDeadlineMs,
 * 15 s): past it the thread is terminated and the item fails with `calculate_too_costly`, while
 * the job's other items run. Whitelisted arithmetic of at most 1000 characters cannot take that
 * long, so the worker here holds its thread for one marked expression
 * (helpers/holding-job-operations-worker.ts); the rest is the real worker.
 */
import test from 'ava';
import { jobLimits, type BatchJobResult } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { HOLD_EXPRESSION } from './helpers/holding-job-operations-worker.ts';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ testSeams: { jobOperationsWorkerModule: new URL('./helpers/holding-job-operations-worker.ts', import.meta.url) } });
});
test.after.always(async () => {
  await svc?.close();
});

test('a calculate item past its deadline fails with calculate_too_costly; the item beside it is answered', async (t) => {
  const { client } = await signInAgent(svc);
  const started = performance.now();
  const submitted = await client.jobs.submit({
    schema: 'svc.batch-job-request.v1',
    operation: 'calculate',
    items: [{ expression: HOLD_EXPRESSION }, { expression: '6 * 7' }],
  });
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 100, maxIntervalMs: 500 });
  const elapsed = performance.now() - started;
  const result: BatchJobResult = await client.jobs.result({ params: { job_id: job.job_id } });
  t.log(`job ${job.status} after ${Math.round(elapsed)} ms`);
  t.like(result.items[0], { status: 'failed', error: { code: 'calculate_too_costly' } });
  t.regex((result.items[0] as { error: { message: string } }).error.message, new RegExp(`${jobLimits.calculateDeadlineMs} ms`));
  t.like(result.items[1], { status: 'succeeded', result: { value: 42 } });
  t.true(elapsed >= jobLimits.calculateDeadlineMs, `the item was stopped at its deadline, not before (${Math.round(elapsed)} ms)`);
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
});
