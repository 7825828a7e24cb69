import test from 'ava';
import { createClient, type SvcClient } from '@svc/client';
import type { BatchJob } from '@svc/schemas';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { pollJobUntil } from './helpers/jobs.ts';

/**
 * The job queue's backstop at its default period (db/backstop.ts) still takes up a killed
 * server's job in time. On the embedded database the backstop comes every 60 s, but the next
 * process looks once one lease after its start (`firstBackstopMs`): with a 10 s lease that
 * outlives the restart, the job is claimed again about 11 s after the restart, not 60. On
 * PostgreSQL a second replica, already running, finds it within the lease plus its 10 s backstop.
 */
const OPERATOR_TOKEN = 'idle-backstop-recovery-operator-token-0123';
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const LEASE_SECONDS = 10;
/** Taken up by then, or the period was the 60 s one: the lease, the first backstop's second, and room for a loaded machine. */
const TAKEN_UP_WITHIN_MS = 40_000;
let database: TestDatabase | undefined;

test.after.always(async () => {
  killAllServerProcesses();
  await database?.drop().catch(() => {});
});

const operator = (baseUrl: string): SvcClient => createClient({ baseUrl, token: OPERATOR_TOKEN, retry: 0 });

test("a killed server's job is taken up again one lease after the restart (embedded) or the lease plus 10 s (PostgreSQL), with the default backstop period", async (t) => {
  database = await createTestDatabase();
  // No SVC_JOBS_POLL_INTERVAL_MS: the default period is what is tested.
  const env = { SVC_OPERATOR_TOKEN: OPERATOR_TOKEN, SVC_JOBS_LEASE_SECONDS: String(LEASE_SECONDS), SVC_PDF_RATE_LIMIT: '0' };
  const first = await startServerProcess(database, env);
  const item = { data_base64: slowPdf(100, 7_000, { shortText: true }).toString('base64'), max_pages: 100 };
  const submitted = await operator(first.baseUrl).jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'pdf_extract', items: [item, item, item] });
  const second = onPostgres ? startServerProcess(database, env) : undefined;
  await pollJobUntil(operator(first.baseUrl), submitted.job_id, (job) => job.status === 'running', 60_000);
  await first.kill();
  const survivor = (await second) ?? (await startServerProcess(database, env));
  const from = performance.now();
  const retried = await pollJobUntil(operator(survivor.baseUrl), submitted.job_id, (job) => job.attempts >= 2, TAKEN_UP_WITHIN_MS);
  t.log(`claimed again ${Math.round(performance.now() - from)} ms after the ${onPostgres ? 'second replica was up' : 'restart'} (lease ${LEASE_SECONDS} s)`);
  t.like(retried, { attempts: 2 });
  const finished = await pollJobUntil(operator(survivor.baseUrl), submitted.job_id, (job) => job.status !== 'running' && job.status !== 'queued', 90_000);
  t.like(finished, { status: 'completed', attempts: 2 });
  await survivor.stop();
});
