/**
 * A job item's deadline counts from when its worker thread has started and loaded what the
 * operation needs, not from when the item was handed to the pool: a thread that starts slowly
 * (helpers/slow-start-job-operations-worker.ts, longer than calculate's whole 15 s deadline) is
 * the start's 30 s deadline, and the item, which is cheap, succeeds.
 */
import test from 'ava';
import { jobLimits, type BatchJobResult } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { SLOW_START_MS } from './helpers/slow-start-job-operations-worker.ts';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ testSeams: { jobOperationsWorkerModule: new URL('./helpers/slow-start-job-operations-worker.ts', import.meta.url) } });
});
test.after.always(async () => {
  await svc?.close();
});

test('a calculate item whose thread starts slower than its deadline still runs: the deadline begins once the thread has started', async (t) => {
  t.true(SLOW_START_MS > jobLimits.calculateDeadlineMs, 'the start outlasts the item deadline, or this proves nothing');
  const { client } = await signInAgent(svc);
  const started = performance.now();
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '6 * 7' }] });
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 200, maxIntervalMs: 1000 });
  const result: BatchJobResult = await client.jobs.result({ params: { job_id: job.job_id } });
  t.log(`job ${job.status} after ${Math.round(performance.now() - started)} ms`);
  t.like(result.items[0], { status: 'succeeded', result: { value: 42 } });
});
