/**
 * A validate_json thread that dies while loading its module (a missing file, as in the published
 * build before its workers were entries) is reported by Piscina on the pool, not on a task.
 * Nothing listened: that 'error' event ended the whole server process on the first item. Now the
 * item fails, the pool is dropped, and the server goes on answering. calculate runs in the same
 * worker (mathjs's load held the event loop 1.2-1.8 s on the main thread), so it fails the same way.
 */
import test from 'ava';
import type { BatchJobResult } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ testSeams: { jobOperationsWorkerModule: new URL('./helpers/unloadable-worker.ts', import.meta.url) } });
});
test.after.always(async () => {
  await svc?.close();
});

test('a validate_json thread that cannot load fails its item and the server stays up', async (t) => {
  const { client } = await signInAgent(svc);
  for (const attempt of [1, 2]) {
    const submitted = await client.jobs.submit({
      schema: 'svc.batch-job-request.v1',
      operation: 'validate_json',
      items: [{ schema: { type: 'integer' }, document: attempt }],
    });
    const job = await client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
    const result: BatchJobResult = await client.jobs.result({ params: { job_id: job.job_id } });
    t.like(result.items[0], { status: 'failed', error: { code: 'internal_error' } }, `attempt ${attempt}`);
  }
  const health = await fetch(`${svc.baseUrl}/healthz`);
  t.is(health.status, 200);
});

test('calculate runs in the job operations worker: a thread that cannot load fails its item and the server stays up', async (t) => {
  const { client } = await signInAgent(svc);
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '6 * 7' }] });
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
  const result: BatchJobResult = await client.jobs.result({ params: { job_id: job.job_id } });
  t.like(result.items[0], { status: 'failed', error: { code: 'internal_error' } });
  const health = await fetch(`${svc.baseUrl}/healthz`);
  t.is(health.status, 200);
});
