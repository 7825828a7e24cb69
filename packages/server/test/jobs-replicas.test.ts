import test from 'ava';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type SvcClient } from '@svc/client';
import type { BatchJob } from '@svc/schemas';
import { calculateJob, pollJobUntil } from './helpers/jobs.ts';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * The queue across processes: `svc-server` children over one database. A server killed with
 * SIGKILL mid-job leaves its lease to expire; another process (on PostgreSQL, a second replica
 * already running; on the embedded database, the next process on the same data directory)
 * finishes the job with the attempt counted and the finished items kept. With PostgreSQL, two
 * replicas share 200 jobs: each runs exactly once and no cap is passed at any sampled moment.
 */
const OPERATOR_TOKEN = 'jobs-replicas-operator-token-0123456789';
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const databases: TestDatabase[] = [];

test.after.always(async () => {
  killAllServerProcesses();
  for (const database of databases) await database.drop().catch(() => {});
});

const operator = (baseUrl: string): SvcClient => createClient({ baseUrl, token: OPERATOR_TOKEN, retry: 0 });

test.serial('a server killed with SIGKILL mid-job: after the lease the job is finished elsewhere, attempts counted, finished items kept', async (t) => {
  const database = await createTestDatabase();
  databases.push(database);
  const env = {
    SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
    SVC_JOBS_LEASE_SECONDS: '2',
    SVC_JOBS_POLL_INTERVAL_MS: '100',
    SVC_PDF_RATE_LIMIT: '0',
    SVC_PDF_MAX_PENDING: '8',
    SVC_PDF_QUEUE_TIMEOUT_MS: '60000',
  };
  // On PostgreSQL the second replica starts once the job is submitted (a submission wakes every
  // replica, so one running already could claim it before the first) and is up long after the
  // first claimed it; it finds the job by its backstop poll after the kill, as nothing announces a
  // lease that ran out.
  const first = await startServerProcess(database, env);
  // Three items of about half a second each (700 000 text operators over 100 pages): time to kill the server between them.
  const item = { data_base64: slowPdf(100, 7_000, { shortText: true }).toString('base64'), max_pages: 100 };
  const client = operator(first.baseUrl);
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'pdf_extract', items: [item, item, item] });
  const second = onPostgres ? startServerProcess(database, { ...env, SVC_JOBS_POLL_INTERVAL_MS: '3000' }) : undefined;
  const midway = await pollJobUntil(
    client,
    submitted.job_id,
    (job) => job.status !== 'queued' && (job.progress.succeeded >= 1 || job.status !== 'running'),
    60_000,
  );
  t.like(midway, { status: 'running', attempts: 1 }, `the job is still running when the server dies: ${JSON.stringify(midway)}`);
  await first.kill();
  const survivor = (await second) ?? (await startServerProcess(database, env));
  const finished = await pollJobUntil(operator(survivor.baseUrl), submitted.job_id, (job) => ['completed', 'failed', 'cancelled'].includes(job.status), 90_000);
  t.like(finished, { status: 'completed', attempts: 2, progress: { total: 3, succeeded: 3, failed: 0 } });
  const result = await operator(survivor.baseUrl).jobs.result({ params: { job_id: submitted.job_id } });
  t.deepEqual(
    result.items.map((outcome) => outcome.index),
    [0, 1, 2],
  );
  await survivor.stop();
});

test.serial('a job whose runner dies on its last attempt fails with job_attempts_exhausted, keeping the items that finished', async (t) => {
  const database = await createTestDatabase();
  databases.push(database);
  const env = {
    SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
    SVC_JOBS_LEASE_SECONDS: '2',
    SVC_JOBS_POLL_INTERVAL_MS: '100',
    SVC_JOBS_MAX_ATTEMPTS: '1',
    SVC_PDF_RATE_LIMIT: '0',
  };
  const first = await startServerProcess(database, env);
  const item = { data_base64: slowPdf(100, 7_000, { shortText: true }).toString('base64'), max_pages: 100 };
  const client = operator(first.baseUrl);
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'pdf_extract', items: [item, item, item] });
  const second = onPostgres ? startServerProcess(database, { ...env, SVC_JOBS_POLL_INTERVAL_MS: '3000' }) : undefined;
  const midway = await pollJobUntil(
    client,
    submitted.job_id,
    (job) => job.status !== 'queued' && (job.progress.succeeded >= 1 || job.status !== 'running'),
    60_000,
  );
  t.like(midway, { status: 'running', attempts: 1, max_attempts: 1 });
  await first.kill();
  const survivor = (await second) ?? (await startServerProcess(database, env));
  const failed = await pollJobUntil(operator(survivor.baseUrl), submitted.job_id, (job) => job.status !== 'running' && job.status !== 'queued', 60_000);
  t.like(failed, { status: 'failed', attempts: 1, error: { code: 'job_attempts_exhausted' } });
  const result = await operator(survivor.baseUrl).jobs.result({ params: { job_id: submitted.job_id } });
  t.true(result.items.length >= 1 && result.items.length < 3);
  t.like(result, { status: 'failed', error: { code: 'job_attempts_exhausted' } });
  await survivor.stop();
});

if (onPostgres) {
  test.serial('a job submitted on a replica that runs none is run by another at once, not at its next poll (LISTEN/NOTIFY)', async (t) => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = { SVC_OPERATOR_TOKEN: OPERATOR_TOKEN };
    // The runner's backstop poll is ten minutes: only the submission's notification can wake it in time.
    const [admitting, running] = await Promise.all([
      startServerProcess(database, { ...env, SVC_JOBS_WORKERS: '0' }),
      startServerProcess(database, { ...env, SVC_JOBS_POLL_INTERVAL_MS: '600000' }),
    ]);
    const submitted = await operator(admitting.baseUrl).jobs.submit(calculateJob(2));
    const finished = await pollJobUntil(operator(running.baseUrl), submitted.job_id, (job) => job.status === 'completed', 60_000);
    t.like(finished, { status: 'completed', attempts: 1, progress: { total: 2, succeeded: 2 } });
    await Promise.all([admitting.stop(), running.stop()]);
  });

  test.serial('two replicas share 200 jobs: each runs exactly once, and the caps hold at every sampled moment', async (t) => {
    const database = await createTestDatabase();
    databases.push(database);
    const caps = { perPrincipalJobs: 12, globalJobs: 12, perPrincipalItems: 48, globalItems: 48 };
    const env = {
      SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
      SVC_JOBS_WORKERS: '3',
      SVC_JOBS_POLL_INTERVAL_MS: '50',
      SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: String(caps.perPrincipalJobs),
      SVC_JOBS_MAX_ACTIVE_GLOBAL: String(caps.globalJobs),
      SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: String(caps.perPrincipalItems),
      SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL: String(caps.globalItems),
      SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: '1000',
      SVC_JOBS_MAX_RETAINED_GLOBAL: '1000',
    };
    const [one, two] = await Promise.all([startServerProcess(database, env), startServerProcess(database, env)]);
    const sampler = new pg.Client({ connectionString: database.databaseUrl });
    await sampler.connect();
    let sampling = true;
    const samples: Array<{ active: number; items: number; running: number }> = [];
    const sampling$ = (async () => {
      while (sampling) {
        const { rows } = await sampler.query<{ active: string; items: string; running: string }>(
          "SELECT count(*) AS active, coalesce(sum(item_count), 0) AS items, count(*) FILTER (WHERE status = 'running') AS running FROM svc_jobs WHERE status IN ('queued', 'running')",
        );
        samples.push({ active: Number(rows[0]!.active), items: Number(rows[0]!.items), running: Number(rows[0]!.running) });
        await sleep(10);
      }
    })();
    // Submitters on both replicas; a 429 waits for its Retry-After (shortened) and tries the same key again.
    const clients = [operator(one.baseUrl), operator(two.baseUrl)];
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        for (let index = lane; index < 200; index += 8) {
          const key = `bench-${index}`;
          for (;;) {
            try {
              ids.push((await clients[index % 2]!.jobs.submit(calculateJob(1 + (index % 4), `${index} * 2`), { idempotencyKey: key })).job_id);
              break;
            } catch (error) {
              if ((error as { status?: number }).status !== 429) throw error;
              await sleep(20);
            }
          }
        }
      }),
    );
    await waitUntil(
      'every job to finish',
      async () => {
        const { rows } = await sampler.query<{ left: string }>("SELECT count(*) AS left FROM svc_jobs WHERE status IN ('queued', 'running')");
        return Number(rows[0]!.left) === 0;
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    sampling = false;
    await sampling$;
    const { rows } = await sampler.query<{ status: string; attempts: number; outcomes: number; item_count: number }>(
      'SELECT status, attempts, jsonb_array_length(outcomes) AS outcomes, item_count FROM svc_jobs',
    );
    await sampler.end();
    t.is(new Set(ids).size, 200);
    t.is(rows.length, 200);
    t.true(
      rows.every((row) => row.status === 'completed' && row.attempts === 1 && row.outcomes === row.item_count),
      'every job ran once, every item once',
    );
    t.true(samples.length > 10);
    t.true(
      samples.every((sample) => sample.active <= caps.globalJobs && sample.items <= caps.globalItems),
      `active caps held (max ${Math.max(...samples.map((sample) => sample.active))} jobs)`,
    );
    t.true(
      samples.every((sample) => sample.running <= 6),
      'never more running than 2 replicas x 3 workers',
    );
    await Promise.all([one.stop(), two.stop()]);
  });
}
