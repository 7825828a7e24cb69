import test from 'ava';
import type { BatchJob } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { calculateJob } from './helpers/jobs.ts';

/**
 * GET /v1/jobs: the caller's jobs, newest first, by keyset cursor, optionally of one status.
 * `idle` runs no jobs, so the submitted ones stay queued and cancelling one gives a second status.
 */
let idle: TestServer;
test.before(async () => {
  idle = await startTestServer({ env: { SVC_JOBS_WORKERS: '0', SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: '8' } });
});
test.after.always(async () => {
  await idle?.close();
});

test('a page of my jobs newest first, the next by cursor, one status, and nobody else sees them', async (t) => {
  const { client } = await signInAgent(idle, 'jobs:read jobs:write');
  const submitted: BatchJob[] = [];
  for (let index = 0; index < 5; index++) submitted.push(await client.jobs.submit(calculateJob(index + 1)));
  const newestFirst = submitted.map((job) => job.job_id).reverse();

  const first = await client.jobs.list({ query: { limit: 2 } });
  t.is(first.object, 'list');
  t.deepEqual(
    first.data.map((job) => job.job_id),
    newestFirst.slice(0, 2),
  );
  t.true(first.has_more);
  t.deepEqual(first.data[0], await client.jobs.get({ params: { job_id: newestFirst[0]! } }), 'the same view as GET /v1/jobs/:job_id');
  const second = await client.jobs.list({ query: { limit: 2, cursor: first.next_cursor! } });
  t.deepEqual(
    second.data.map((job) => job.job_id),
    newestFirst.slice(2, 4),
  );
  const last = await client.jobs.list({ query: { limit: 2, cursor: second.next_cursor! } });
  t.deepEqual(
    last.data.map((job) => job.job_id),
    newestFirst.slice(4),
  );
  t.false(last.has_more);
  t.is(last.next_cursor, null);

  // The client walks every page.
  const all: string[] = [];
  for await (const job of client.jobs.list.all({ query: { limit: 2 } })) all.push(job.job_id);
  t.deepEqual(all, newestFirst);

  await client.jobs.cancel({ params: { job_id: submitted[1]!.job_id } });
  const cancelled = await client.jobs.list({ query: { status: 'cancelled' } });
  t.deepEqual(
    cancelled.data.map((job) => [job.job_id, job.status]),
    [[submitted[1]!.job_id, 'cancelled']],
  );
  t.is((await client.jobs.list({ query: { status: 'queued' } })).data.length, 4);

  const stranger = await signInAgent(idle, 'jobs:read');
  t.deepEqual(await stranger.client.jobs.list(), { object: 'list', data: [], has_more: false, next_cursor: null });
});

test('a cursor the server did not give out, or a status that is not one, is 422; the scope is jobs:read', async (t) => {
  const { session } = await signInAgent(idle, 'jobs:read');
  const get = (query: string) => fetch(`${idle.baseUrl}/v1/jobs?${query}`, { headers: { authorization: `Bearer ${session.accessToken}` } });
  const forged = await get('cursor=bm90LWEtY3Vyc29y');
  t.is(forged.status, 422);
  t.regex(await forged.text(), /query\.cursor/);
  t.is((await get('status=sleeping')).status, 422);
  t.is((await get('limit=101')).status, 422);
  const { session: narrow } = await signInAgent(idle, 'models:read');
  const refused = await fetch(`${idle.baseUrl}/v1/jobs`, { headers: { authorization: `Bearer ${narrow.accessToken}` } });
  t.is(refused.status, 403);
  t.is((await fetch(`${idle.baseUrl}/v1/jobs`)).status, 401);
});

test('jobs made in the same millisecond are each on a page: the cursor keeps the microseconds', async (t) => {
  const { client, id } = await signInAgent(idle, 'jobs:read jobs:write');
  const jobs: BatchJob[] = [];
  for (let index = 0; index < 3; index++) jobs.push(await client.jobs.submit(calculateJob(1)));
  // Three creation times within one millisecond, the ids in the order that would expose a cut to milliseconds.
  const sequelize = idle.server.database.sequelize;
  for (const [index, job] of jobs.entries()) {
    await sequelize.query('UPDATE svc_jobs SET created_at = $1::timestamptz WHERE id = $2 AND principal_id = $3', {
      bind: [`2026-01-01T00:00:00.123${String(index + 1).padStart(3, '0')}Z`, job.job_id, id],
    });
  }
  const walked: string[] = [];
  for await (const job of client.jobs.list.all({ query: { limit: 1 } })) walked.push(job.job_id);
  t.deepEqual(walked, jobs.map((job) => job.job_id).reverse());
});
