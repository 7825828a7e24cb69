import test from 'ava';
import { jobLimits } from '@svc/schemas';
import { loadConfig } from '../src/index.ts';
import { signInAgent } from '@svc/testing/identity';
import { calculateJob, postJob } from './helpers/jobs.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Admission of batch jobs on a server that runs none (SVC_JOBS_WORKERS=0), so submitted jobs
 * stay queued and count against the active caps: caps at their edges, idempotent replay and
 * conflict, body and item limits, cancellation, and who may submit at all.
 */
const DEMO_TOKEN = 'svc_demo_jobs_token';
let svc: TestServer;

test.before(async () => {
  svc = await startTestServer({
    env: {
      SVC_JOBS_WORKERS: '0',
      SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: '3',
      SVC_JOBS_MAX_ACTIVE_GLOBAL: '6',
      SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL: '25',
      SVC_DEMO_TOKEN: DEMO_TOKEN,
      SVC_DEMO_SCOPES: 'jobs:read jobs:write',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
});

test("the configuration defaults are the spec's limits", (t) => {
  const { jobs } = loadConfig({});
  t.like(jobs, {
    maxResultBytes: 8_388_608,
    maxActivePerPrincipal: 2,
    maxActiveGlobal: 32,
    maxActiveItemsPerPrincipal: 16,
    maxActiveItemsGlobal: 256,
    maxAttempts: 3,
    resultTtlSeconds: 86_400,
    maxRetainedPerPrincipal: 32,
    maxRetainedGlobal: 256,
    idempotencyTtlSeconds: 86_400,
  });
  t.is(jobLimits.maxItems, 8);
  t.is(jobLimits.maxRequestBytes, 524_288);
});

test.serial('active caps per principal and overall, each at its edge, with 429 and Retry-After', async (t) => {
  const [one, two, three, four] = await Promise.all([signInAgent(svc), signInAgent(svc), signInAgent(svc), signInAgent(svc)]);
  const accepted: Array<{ token: string; jobId: string }> = [];
  const submit = async (agent: typeof one, count: number) => {
    const response = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify(calculateJob(count)), { 'idempotency-key': crypto.randomUUID() });
    if (response.status === 202) accepted.push({ token: agent.session.accessToken, jobId: ((await response.clone().json()) as { job_id: string }).job_id });
    return response;
  };
  const refusedWith = async (response: Response, code: string) => {
    t.is(response.status, 429);
    t.is(response.headers.get('retry-after'), '2');
    t.is(((await response.json()) as { code: string }).code, code);
  };
  // Items per principal: 16 active pass, 17 do not (jobs per principal is 3 here, so items decide).
  t.is((await submit(one, 8)).status, 202);
  t.is((await submit(one, 8)).status, 202);
  await refusedWith(await submit(one, 1), 'jobs_active_limit:principal_items');
  // Jobs per principal: 3 pass, the 4th does not.
  const jobsOfTwo: string[] = [];
  for (let index = 0; index < 3; index += 1) {
    const response = await submit(two, 1);
    t.is(response.status, 202);
    jobsOfTwo.push(((await response.json()) as { job_id: string }).job_id);
  }
  await refusedWith(await submit(two, 1), 'jobs_active_limit:principal_jobs');
  // Overall: now 5 jobs and 19 items; 6 jobs and 25 items pass, a 7th job does not.
  t.is((await submit(three, 6)).status, 202);
  await refusedWith(await submit(four, 1), 'jobs_active_limit:global_jobs');
  // Cancel one job of one item: 5 jobs, 24 items. Two more items would make 26 of 25; one makes 25.
  const twoClient = svc.client({ token: two.session.accessToken });
  t.is((await twoClient.jobs.cancel({ params: { job_id: jobsOfTwo[0]! } })).status, 'cancelled');
  await refusedWith(await submit(four, 2), 'jobs_active_limit:global_items');
  t.is((await submit(four, 1)).status, 202);
  // Cancelled jobs no longer count: free every slot for the other tests.
  for (const { token, jobId } of accepted) await svc.client({ token }).jobs.cancel({ params: { job_id: jobId } });
});

test.serial('Idempotency-Key: the same body replays the first answer, another body is a 409, none is a 422', async (t) => {
  const agent = await signInAgent(svc);
  const token = agent.session.accessToken;
  const key = crypto.randomUUID();
  const body = JSON.stringify(calculateJob(1, '6 * 7'));
  const first = await postJob(svc.baseUrl, token, body, { 'idempotency-key': key });
  t.is(first.status, 202);
  t.is(first.headers.get('idempotent-replayed'), null);
  const job = (await first.json()) as { job_id: string; status: string };
  t.is(job.status, 'queued');
  // The same request again, keys of its objects in another order: the stored answer, nothing queued.
  const again = await postJob(
    svc.baseUrl,
    token,
    JSON.stringify({ items: [{ expression: '6 * 7' }], operation: 'calculate', schema: 'svc.batch-job-request.v1' }),
    { 'idempotency-key': key },
  );
  t.is(again.status, 202);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is(again.headers.get('location'), `/v1/jobs/${job.job_id}`);
  t.deepEqual(await again.json(), job);
  const other = await postJob(svc.baseUrl, token, JSON.stringify(calculateJob(1, '1')), { 'idempotency-key': key });
  t.is(other.status, 409);
  t.like(await other.json(), { code: 'idempotency_conflict' });
  // Keys are the principal's own: another agent's same key is a new job.
  const stranger = await signInAgent(svc);
  const theirs = await postJob(svc.baseUrl, stranger.session.accessToken, body, { 'idempotency-key': key });
  t.is(theirs.status, 202);
  t.not(((await theirs.json()) as { job_id: string }).job_id, job.job_id);
  // No key at all: a 422 naming the header.
  const keyless = await postJob(svc.baseUrl, token, body);
  t.is(keyless.status, 422);
  const error = (await keyless.json()) as { code: string; detail: Array<{ loc: string[] }> };
  t.is(error.code, 'validation_failed');
  t.deepEqual(error.detail[0]!.loc, ['header', 'idempotency-key']);
  await svc.client({ token }).jobs.cancel({ params: { job_id: job.job_id } });
  const replayedTheirs = (await (await postJob(svc.baseUrl, stranger.session.accessToken, body, { 'idempotency-key': key })).json()) as { job_id: string };
  await svc.client({ token: stranger.session.accessToken }).jobs.cancel({ params: { job_id: replayedTheirs.job_id } });
});

test.serial('a refused submission stores nothing: the same key succeeds once the cause is gone', async (t) => {
  const agent = await signInAgent(svc);
  const client = svc.client({ token: agent.session.accessToken });
  const held = await Promise.all([client.jobs.submit(calculateJob(1)), client.jobs.submit(calculateJob(1)), client.jobs.submit(calculateJob(1))]);
  const key = crypto.randomUUID();
  const refused = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify(calculateJob(1)), { 'idempotency-key': key });
  t.is(refused.status, 429);
  await client.jobs.cancel({ params: { job_id: held[0]!.job_id } });
  const accepted = await client.jobs.submit(calculateJob(1), { idempotencyKey: key });
  t.is(accepted.status, 'queued');
  for (const job of [...held.slice(1), accepted]) await client.jobs.cancel({ params: { job_id: job.job_id } });
});

test.serial("items: 8 pass, 9 are a 422; each item is checked with its operation's schema", async (t) => {
  const agent = await signInAgent(svc);
  const client = svc.client({ token: agent.session.accessToken });
  const eight = await client.jobs.submit(calculateJob(8));
  t.is(eight.progress.total, 8);
  await client.jobs.cancel({ params: { job_id: eight.job_id } });
  const nine = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify(calculateJob(9)), { 'idempotency-key': crypto.randomUUID() });
  t.is(nine.status, 422);
  const none = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify(calculateJob(0)), { 'idempotency-key': crypto.randomUUID() });
  t.is(none.status, 422);
  const badItem = await postJob(
    svc.baseUrl,
    agent.session.accessToken,
    JSON.stringify({ schema: 'svc.batch-job-request.v1', operation: 'embeddings', items: [{ input: 'fine' }, { input: 42 }] }),
    { 'idempotency-key': crypto.randomUUID() },
  );
  t.is(badItem.status, 422);
  t.deepEqual(((await badItem.json()) as { detail: Array<{ loc: unknown[] }> }).detail[0]!.loc.slice(0, 4), ['body', 'items', 1, 'input']);
  const chat = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify({ schema: 'svc.batch-job-request.v1', operation: 'chat', items: [{}] }), {
    'idempotency-key': crypto.randomUUID(),
  });
  t.is(chat.status, 422, 'chat, the paid operation, is not a job operation');
  const wrongSchema = await postJob(svc.baseUrl, agent.session.accessToken, JSON.stringify({ ...calculateJob(1), schema: 'svc.batch-job-request.v2' }), {
    'idempotency-key': crypto.randomUUID(),
  });
  t.is(wrongSchema.status, 422);
});

test.serial('the body cap: 524288 bytes pass, 524289 are a 413', async (t) => {
  const agent = await signInAgent(svc);
  // Three validate_json items share the padding: one document may hold at most
  // validateJsonDocumentMaxChars, and the body cap is about twice that.
  const sized = (bytes: number) => {
    const items = [0, 1, 2].map(() => ({ schema: { type: 'string' }, document: '' }));
    const shell = JSON.stringify({ schema: 'svc.batch-job-request.v1', operation: 'validate_json', items });
    const padding = bytes - shell.length;
    const share = Math.ceil(padding / 3);
    t.true(share <= jobLimits.validateJsonDocumentMaxChars);
    let left = padding;
    return shell.replace(/"document":""/g, () => {
      const take = Math.min(share, left);
      left -= take;
      return `"document":"${'x'.repeat(take)}"`;
    });
  };
  t.is(Buffer.byteLength(sized(jobLimits.maxRequestBytes)), jobLimits.maxRequestBytes);
  const atCap = await postJob(svc.baseUrl, agent.session.accessToken, sized(jobLimits.maxRequestBytes), { 'idempotency-key': crypto.randomUUID() });
  t.is(atCap.status, 202);
  await svc.client({ token: agent.session.accessToken }).jobs.cancel({ params: { job_id: ((await atCap.json()) as { job_id: string }).job_id } });
  const over = await postJob(svc.baseUrl, agent.session.accessToken, sized(jobLimits.maxRequestBytes + 1), { 'idempotency-key': crypto.randomUUID() });
  t.is(over.status, 413);
});

test.serial('cancel: a queued job is cancelled at once and for good; the result of a cancelled job is a 409', async (t) => {
  const agent = await signInAgent(svc);
  const client = svc.client({ token: agent.session.accessToken });
  const job = await client.jobs.submit(calculateJob(2));
  const cancelled = await client.jobs.cancel({ params: { job_id: job.job_id } });
  t.like(cancelled, { status: 'cancelled', attempts: 0 });
  t.truthy(cancelled.cancelled_at);
  t.truthy(cancelled.expires_at);
  t.like(await client.jobs.cancel({ params: { job_id: job.job_id } }), { status: 'cancelled' }, 'cancelling again answers the same');
  const result = await client.jobs.result({ params: { job_id: job.job_id } }).catch((error: unknown) => error as { status: number; code: string });
  t.like(result, { status: 409, code: 'job_cancelled' });
});

test.serial("another principal's job is a 404; the shared demo principal is refused with 403", async (t) => {
  const owner = await signInAgent(svc);
  const stranger = await signInAgent(svc);
  const job = await svc.client({ token: owner.session.accessToken }).jobs.submit(calculateJob(1));
  const strangerClient = svc.client({ token: stranger.session.accessToken });
  for (const call of [
    () => strangerClient.jobs.get({ params: { job_id: job.job_id } }),
    () => strangerClient.jobs.cancel({ params: { job_id: job.job_id } }),
    () => strangerClient.jobs.result({ params: { job_id: job.job_id } }),
  ]) {
    t.like(await call().catch((error: unknown) => error), { status: 404, code: 'job_not_found' });
  }
  await svc.client({ token: owner.session.accessToken }).jobs.cancel({ params: { job_id: job.job_id } });
  const demo = await postJob(svc.baseUrl, DEMO_TOKEN, JSON.stringify(calculateJob(1)), { 'idempotency-key': crypto.randomUUID() });
  t.is(demo.status, 403);
  t.like(await demo.json(), { code: 'principal_not_allowed' });
});

test.serial('a developer key needs jobs:write to submit and jobs:read to look', async (t) => {
  const agent = await signInAgent(svc);
  const reader = await agent.client.credentials.create({ body: { name: 'reader', scopes: ['jobs:read'] } });
  const refused = await postJob(svc.baseUrl, reader.secret, JSON.stringify(calculateJob(1)), { 'idempotency-key': crypto.randomUUID() });
  t.is(refused.status, 403);
  t.like(await refused.json(), { code: 'insufficient_scope:jobs:write' });
});

test.serial('concurrent requests with one Idempotency-Key queue one job: the others replay it or are told to retry', async (t) => {
  const agent = await signInAgent(svc);
  const token = agent.session.accessToken;
  const key = crypto.randomUUID();
  const body = JSON.stringify(calculateJob(1, '2 + 2'));
  const answers = await Promise.all(Array.from({ length: 6 }, () => postJob(svc.baseUrl, token, body, { 'idempotency-key': key })));
  const ids = new Set<string>();
  for (const answer of answers) {
    const payload = (await answer.json()) as { job_id?: string; code?: string };
    if (answer.status === 202) ids.add(payload.job_id!);
    else {
      t.is(answer.status, 409);
      t.is(payload.code, 'idempotency_in_progress');
      t.is(answer.headers.get('retry-after'), '1');
    }
  }
  t.is(ids.size, 1, 'every accepted answer names the same job');
  // Only one job is active: two more fit under this principal's cap of three, a third does not.
  const client = svc.client({ token });
  const more = [await client.jobs.submit(calculateJob(1)), await client.jobs.submit(calculateJob(1))];
  t.like(await client.jobs.submit(calculateJob(1)).catch((error: unknown) => error), { status: 429, code: 'jobs_active_limit:principal_jobs' });
  for (const jobId of [...ids, ...more.map((job) => job.job_id)]) await client.jobs.cancel({ params: { job_id: jobId } });
});
