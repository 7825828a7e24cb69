import test from 'ava';
import type { BatchJob, BatchJobResult } from '@svc/schemas';
import type { SvcClient } from '@svc/client';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';
import { signInAgent } from '@svc/testing/identity';
import { calculateJob, postJob } from './helpers/jobs.ts';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Jobs that run: every operation that has an engine on this branch, per-item failures, status
 * transitions, the result cap, retention by row cap and by TTL, and cancel racing the claim.
 * resolve_link reaches a real HTTPS server on loopback through the PDF fetcher's test seam.
 */
const certificate = selfSignedCertificate(['links.test']);
const names: Record<string, string[]> = { 'links.test': ['127.0.0.1'], 'private.test': ['10.0.0.8'] };
const lookup = async (hostname: string) => {
  const addresses = names[hostname];
  if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
  return addresses.map((address) => ({ address, family: 4 }));
};
let source: HttpsSource;
let svc: TestServer;
let shortLived: TestServer;
let smallStore: TestServer;
let links = '';

test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/page': (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!doctype html><html><head><title> Hello &amp; welcome </title></head><body>hi</body></html>'),
    '/moved': (_request, response) => response.writeHead(301, { location: '/hop' }).end(),
    '/hop': (_request, response) => response.writeHead(302, { location: '/page' }).end(),
    '/data.json': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    '/gone': (_request, response) => response.writeHead(404, { 'content-type': 'text/plain' }).end('no'),
    '/to-private': (_request, response) => response.writeHead(302, { location: 'https://private.test/secret' }).end(),
  });
  links = `https://links.test:${source.port}`;
  [svc, shortLived, smallStore] = await Promise.all([
    startTestServer({
      env: {
        SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: '3',
        SVC_JOBS_MAX_RESULT_BYTES: '20000',
        SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: '32',
        SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: '256',
        SVC_PDF_RATE_LIMIT: '0',
      },
      testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
    }),
    // A TTL of 5 s, not 1 s: at load 20 a job's result had expired before the client, polling, read it.
    startTestServer({ env: { SVC_JOBS_RESULT_TTL_SECONDS: '5', SVC_OPEN_ACCESS: 'true' } }),
    startTestServer({ env: { SVC_JOBS_MAX_RETAINED_GLOBAL: '2' } }),
  ]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), shortLived?.close(), smallStore?.close()]);
  await source?.close();
});

async function agentClient(server = svc): Promise<SvcClient> {
  return (await signInAgent(server)).client;
}

async function runToResult(client: SvcClient, request: Parameters<SvcClient['jobs']['submit']>[0]): Promise<{ job: BatchJob; result: BatchJobResult }> {
  const submitted = await client.jobs.submit(request);
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
  return { job, result: await client.jobs.result({ params: { job_id: job.job_id } }) };
}

const outcomes = (result: BatchJobResult) => result.items.map((item) => (item.status === 'succeeded' ? item.result : item.error.code));

test('calculate: each item its value, a bad expression fails alone with its code', async (t) => {
  const client = await agentClient();
  const { job, result } = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'calculate',
    items: [
      { expression: '2^10 + sqrt(16) * (3 - 1)' },
      { expression: 'max(1, 7, 3) / 2' },
      { expression: 'sqrt(-1)' },
      { expression: 'constructor' },
      { expression: 'import("fs")' },
      { expression: '1/0' },
      { expression: '5!' },
      { expression: 'round(pi, 3)' },
    ],
  });
  t.like(job, { status: 'completed', attempts: 1, progress: { total: 8, succeeded: 3, failed: 5 }, error: null });
  t.truthy(job.started_at && job.finished_at && job.expires_at);
  t.deepEqual(
    job.items.map((item) => item.status),
    ['succeeded', 'succeeded', 'failed', 'failed', 'failed', 'failed', 'failed', 'succeeded'],
  );
  t.is(job.items[3]!.error_code, 'calculate_invalid');
  t.deepEqual(outcomes(result), [
    { expression: '2^10 + sqrt(16) * (3 - 1)', value: 1032 },
    { expression: 'max(1, 7, 3) / 2', value: 3.5 },
    'calculate_not_finite',
    'calculate_invalid',
    'calculate_invalid',
    'calculate_not_finite',
    'calculate_invalid',
    { expression: 'round(pi, 3)', value: 3.142 },
  ]);
  t.like(result, { object: 'job.result', status: 'completed', error: null });
});

test('validate_json: valid, invalid with every violation, and a schema that does not compile', async (t) => {
  const client = await agentClient();
  const schema = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
    additionalProperties: false,
  };
  const { result } = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'validate_json',
    items: [
      { schema, document: { name: 'Ada', email: 'ada@example.org' } },
      { schema, document: { email: 'not an email', extra: 1 } },
      { schema: { type: 'nonsense' }, document: 1 },
      { schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: { type: 'integer' } }, document: [1, 2, 'three'] },
      { schema: { $ref: 'https://example.org/remote.json' }, document: 1 },
    ],
  });
  const [valid, invalid, broken, draft7, remote] = outcomes(result) as [
    unknown,
    { valid: boolean; errors: Array<{ keyword: string; instance_path: string }> },
    string,
    { valid: boolean; errors: Array<{ instance_path: string }> },
    string,
  ];
  t.deepEqual(valid, { valid: true, errors: [] });
  t.false(invalid.valid);
  t.deepEqual(invalid.errors.map((error) => error.keyword).sort(), ['additionalProperties', 'format', 'required']);
  t.is(broken, 'json_schema_invalid');
  t.false(draft7.valid);
  t.is(draft7.errors[0]!.instance_path, '/2');
  t.is(remote, 'json_schema_invalid', 'a remote $ref is never fetched');
});

test('resolve_link: redirects, final status and type, the title of HTML; private addresses refused', async (t) => {
  const client = await agentClient();
  const { result } = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'resolve_link',
    items: [
      { url: `${links}/moved` },
      { url: `${links}/data.json` },
      { url: `${links}/gone` },
      { url: 'https://private.test/x' },
      { url: `${links}/to-private` },
      { url: 'https://127.0.0.2/x' },
    ],
  });
  const [moved, json, gone, ...refused] = outcomes(result);
  t.deepEqual(moved, {
    url: `${links}/moved`,
    final_url: `${links}/page`,
    status: 200,
    content_type: 'text/html',
    redirects: [
      { url: `${links}/moved`, status: 301 },
      { url: `${links}/hop`, status: 302 },
    ],
    title: 'Hello & welcome',
  });
  t.like(json, { status: 200, content_type: 'application/json', title: null, redirects: [] });
  t.like(gone, { status: 404, content_type: 'text/plain' });
  t.deepEqual(refused, ['source_url_refused', 'source_url_refused', 'source_url_refused']);
});

test('embeddings and pdf_extract run on the inference engine and the PDF workers', async (t) => {
  const client = await agentClient();
  const embeddingCalls = async () => {
    const text = await (await fetch(`${svc.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${svc.operatorToken}` } })).text();
    return [...text.matchAll(/^svc_inference_calls_total\{operation="embeddings",[^}]*outcome="ok"\} (\d+)$/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  };
  const before = await embeddingCalls();
  const embedded = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'embeddings',
    items: [{ input: 'batch jobs' }, { input: ['one', 'two'], dimensions: 8 }, { input: 'x', model: 'no-such-model' }],
  });
  const [first, second, unknown] = outcomes(embedded.result) as [{ data: Array<{ embedding: number[] }> }, { data: Array<{ embedding: number[] }> }, string];
  t.is(first.data.length, 1);
  t.is(second.data.length, 2);
  t.is(second.data[0]!.embedding.length, 8);
  t.is(unknown, 'model_not_found');
  t.is(await embeddingCalls(), before + 2, 'each item reports its usage through the same hook as the HTTP route');
  const pdf = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'pdf_extract',
    items: [{ data_base64: numberedPdf(2).toString('base64') }, { data_base64: Buffer.from('not a pdf').toString('base64') }],
  });
  const [pages, notPdf] = outcomes(pdf.result) as [{ page_count: number; pages: Array<{ text: string }> }, string];
  t.is(pages.page_count, 2);
  t.regex(pages.pages[1]!.text, /^Page 2 line 1/);
  t.is(notPdf, 'pdf_invalid');
});

test('rerank, classify and summarize run on the built-in engine, one result per item', async (t) => {
  const client = await agentClient();
  const reranked = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'rerank',
    items: [{ query: 'verified downloads', documents: ['the weather today', 'downloads are verified by digest'] }],
  });
  const [ranking] = outcomes(reranked.result) as unknown as [{ results: Array<{ index: number; relevance_score: number }> }];
  t.is(ranking.results[0]!.index, 1);
  const classified = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'classify',
    items: [{ task: 'sentiment', inputs: ['I love it, works great', 'awful and broken'] }],
  });
  const [labels] = outcomes(classified.result) as unknown as [{ results: Array<{ label: string }> }];
  t.deepEqual(
    labels.results.map((result) => result.label),
    ['positive', 'negative'],
  );
  const summarized = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'summarize',
    items: [{ text: 'Jobs run in the background. Each item has its own result. The weather was fine.', max_sentences: 1 }],
  });
  const [summary] = outcomes(summarized.result) as unknown as [{ summary: string; extractive: boolean }];
  t.true(summary.extractive);
  t.true(summary.summary.length > 0);
});

test('results past max_result_bytes fail the job with job_result_too_large, keeping what fit', async (t) => {
  const client = await agentClient();
  const many = Array.from({ length: 400 }, (_, index) => index);
  const { job, result } = await runToResult(client, {
    schema: 'svc.batch-job-request.v1',
    operation: 'validate_json',
    items: [
      { schema: { type: 'integer' }, document: 1 },
      { schema: { type: 'array', items: { type: 'string' } }, document: many },
    ],
  });
  t.like(job, { status: 'failed', error: { code: 'job_result_too_large' }, progress: { succeeded: 1 } });
  t.is(result.items.length, 1);
  t.like(result, { status: 'failed', error: { code: 'job_result_too_large' } });
});

test('status while queued or running: the result is a 409 that says so', async (t) => {
  const client = await agentClient();
  const job = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'resolve_link', items: [{ url: `${links}/page` }] });
  const early = await client.jobs.result({ params: { job_id: job.job_id } }).then(
    () => undefined,
    (error: { status: number; code: string }) => error,
  );
  // The job may already have finished on a fast machine; when it has not, the answer is the 409.
  if (early) {
    t.is(early.status, 409);
    t.regex(early.code, /^job_not_finished:(queued|running)$/);
  }
  const done = await client.jobs.wait(job.job_id, { intervalMs: 20 });
  t.is(done.status, 'completed');
  t.like(await client.jobs.cancel({ params: { job_id: job.job_id } }).catch((error: unknown) => error), { status: 409, code: 'job_not_cancellable:completed' });
});

test('retention by row cap: the oldest finished jobs of a principal go first', async (t) => {
  const client = await agentClient();
  const ids: string[] = [];
  for (let index = 0; index < 4; index += 1) ids.push((await runToResult(client, calculateJob(1, String(index)))).job.job_id);
  t.like(await client.jobs.get({ params: { job_id: ids[0]! } }).catch((error: unknown) => error), { status: 404, code: 'job_not_found' });
  for (const id of ids.slice(1)) t.is((await client.jobs.get({ params: { job_id: id } })).status, 'completed');
});

test('retention by the global row cap: the oldest finished jobs of anyone go first', async (t) => {
  const [one, two] = [await agentClient(smallStore), await agentClient(smallStore)];
  const oldest = (await runToResult(one, calculateJob(1))).job.job_id;
  const middle = (await runToResult(two, calculateJob(1))).job.job_id;
  const newest = (await runToResult(one, calculateJob(1))).job.job_id;
  t.like(await one.jobs.get({ params: { job_id: oldest } }).catch((error: unknown) => error), { status: 404, code: 'job_not_found' });
  t.is((await two.jobs.get({ params: { job_id: middle } })).status, 'completed');
  t.is((await one.jobs.get({ params: { job_id: newest } })).status, 'completed');
});

test('retention by TTL: a finished job is gone once its TTL has passed', async (t) => {
  const client = await agentClient(shortLived);
  const { job } = await runToResult(client, calculateJob(1));
  await new Promise((resolve) => setTimeout(resolve, Date.parse(job.expires_at!) - Date.now() + 50));
  t.like(await client.jobs.get({ params: { job_id: job.job_id } }).catch((error: unknown) => error), { status: 404, code: 'job_not_found' });
  t.like(await client.jobs.result({ params: { job_id: job.job_id } }).catch((error: unknown) => error), { status: 404, code: 'job_not_found' });
});

test('the open-auth principal is refused with 403', async (t) => {
  const response = await postJob(shortLived.baseUrl, undefined, JSON.stringify(calculateJob(1)), { 'idempotency-key': crypto.randomUUID() });
  t.is(response.status, 403);
  t.like(await response.json(), { code: 'principal_not_allowed' });
});

test('cancel racing the claim: each job is either cancelled and never started, or ran, never both', async (t) => {
  // Rounds of three: this server keeps three finished jobs per principal.
  const client = await agentClient();
  for (let round = 0; round < 4; round += 1) {
    const jobs = await Promise.all(Array.from({ length: 3 }, () => client.jobs.submit(calculateJob(1))));
    const cancels = await Promise.all(
      jobs.map((job) =>
        client.jobs.cancel({ params: { job_id: job.job_id } }).then(
          (answer) => answer.status,
          (error: { code: string }) => error.code,
        ),
      ),
    );
    const finals = await Promise.all(jobs.map((job) => client.jobs.wait(job.job_id, { intervalMs: 20 })));
    finals.forEach((final, index) => {
      if (cancels[index] === 'cancelled') t.like(final, { status: 'cancelled', attempts: 0, started_at: null, progress: { succeeded: 0 } });
      else {
        t.regex(String(cancels[index]), /^job_not_cancellable:(running|completed)$/);
        t.like(final, { status: 'completed', attempts: 1, progress: { succeeded: 1 } });
      }
    });
  }
});
