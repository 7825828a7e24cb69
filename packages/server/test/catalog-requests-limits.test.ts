import test from 'ava';
import { loadConfig, ConfigError } from '../src/index.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { signInAgent } from '@svc/testing/identity';
import catalogRequestsMigration from '../src/db/migrations/20261122T1600-catalog-requests.ts';

/**
 * The upgrade (kept here because it needs a server of its own) and per-principal limits on new catalog requests, counted in the database: the limit passes, one
 * past is 429 with Retry-After; replays never count; a burst admits exactly the limit.
 * Serial: the two servers (an hourly and a daily limit) run one after the other.
 */
let svc: TestServer | undefined;
test.afterEach.always(async () => {
  await svc?.close();
  svc = undefined;
});

const body = (index: number) => ({ capability: `capability ${index}`, task: 'rerank', use_case: 'u' });

const refusal = async (promise: Promise<unknown>) => {
  const error = (await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as { status?: number; code?: string; headers?: Headers } | undefined;
  return { status: error?.status, code: error?.code, retryAfter: Number(error?.headers?.get('retry-after') ?? 'NaN') };
};

test.serial(
  'hourly limit: 3 pass, the 4th is 429 with Retry-After; replays still answer; another principal is not affected; the api surface counts too',
  async (t) => {
    svc = await startTestServer({ env: { SVC_REQUESTS_PER_HOUR: '3', SVC_CATALOG_DEMO: 'on' } });
    const { client, session } = await signInAgent(svc);
    const filed = [];
    for (let index = 0; index < 3; index++) filed.push(await client.requests.feature({ body: body(index) }));
    const refused = await refusal(client.requests.feature({ body: body(3) }));
    t.is(refused.status, 429);
    t.is(refused.code, 'request_rate_limited');
    t.true(refused.retryAfter >= 1 && refused.retryAfter <= 3600, `Retry-After ${refused.retryAfter}`);
    const replay = await client.withResponse.requests.feature({ body: body(0) });
    t.is(replay.response.status, 200);
    t.is(replay.data.request_id, filed[0]!.request_id);
    // The api surface files under the same principal when the same bearer is sent.
    const api = await fetch(`${svc.apiUrl}/api/source-requests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.accessToken}` },
      body: JSON.stringify({ repo: 'a/b', source: 'github', useCase: 'u', targetTool: 'vllm' }),
    });
    t.is(api.status, 429);
    t.truthy(api.headers.get('retry-after'));
    t.is(((await api.json()) as { code: string }).code, 'request_rate_limited');
    const other = await signInAgent(svc);
    t.truthy(await other.client.requests.feature({ body: body(0) }));
    t.is((await client.requests.status()).data.length, 3, 'a refusal stores nothing');
  },
);

test.serial('a burst of 10 different requests at once admits exactly the hourly limit', async (t) => {
  svc = await startTestServer({ env: { SVC_REQUESTS_PER_HOUR: '3' } });
  const { client } = await signInAgent(svc);
  const results = await Promise.allSettled(Array.from({ length: 10 }, (_, index) => client.requests.feature({ body: body(index) })));
  t.is(results.filter((result) => result.status === 'fulfilled').length, 3);
  t.true(results.every((result) => result.status === 'fulfilled' || (result.reason as { code?: string }).code === 'request_rate_limited'));
  t.is((await client.requests.status()).data.length, 3);
});

test.serial('daily limit: 2 pass, the 3rd is 429 with a Retry-After up to a day; 0 refuses every new request', async (t) => {
  svc = await startTestServer({ env: { SVC_REQUESTS_PER_HOUR: '100', SVC_REQUESTS_PER_DAY: '2' } });
  const { client } = await signInAgent(svc);
  await client.requests.feature({ body: body(0) });
  await client.requests.feature({ body: body(1) });
  const refused = await refusal(client.requests.feature({ body: body(2) }));
  t.is(refused.status, 429);
  t.true(refused.retryAfter >= 1 && refused.retryAfter <= 86_400);
  await svc.close();
  svc = await startTestServer({ env: { SVC_REQUESTS_PER_HOUR: '0' } });
  const closed = await signInAgent(svc);
  t.is((await refusal(closed.client.requests.feature({ body: body(0) }))).status, 429);
});

test('configuration: the limits are integers 0..1000000', (t) => {
  t.deepEqual(loadConfig({}).requests, { perHour: 20, perDay: 100 });
  t.is(loadConfig({ SVC_REQUESTS_PER_HOUR: '1000000' }).requests.perHour, 1_000_000);
  for (const value of ['-1', '1000001', 'many'])
    t.throws(() => loadConfig({ SVC_REQUESTS_PER_DAY: value }), { instanceOf: ConfigError, message: /SVC_REQUESTS_PER_DAY/ });
});

test.serial("the upgrade keeps the api surface's earlier requests: brr_ ids, a submitted history, on the radar", async (t) => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  const { sequelize } = svc.server.database;
  // Back to the table the api surface used to write, with two rows of that time, then up again.
  await sequelize.transaction((transaction) => catalogRequestsMigration.down({ sequelize, transaction }));
  await sequelize.query(
    `INSERT INTO catalog_requests (id, kind, artifact_id, repo, source, use_case, target_tool, caller_key, created_at) VALUES
       ('req_0123456789abcdef01234567', 'mirror', 'all-minilm-l6-v2', NULL, NULL, 'offline', 'onnxruntime', 'ip:203.0.113.7', '2026-11-01T10:00:00.123456Z'),
       ('req_89abcdef0123456789abcdef', 'source', NULL, 'Org/Legacy', 'github', 'old ask', 'vllm', 'bearer:abc', '2026-11-02T10:00:00Z')`,
  );
  await sequelize.transaction((transaction) => catalogRequestsMigration.up({ sequelize, transaction }));
  const mirror = await svc.operator.requests.receipt({ params: { request_id: 'brr_0123456789abcdef01234567' } });
  t.like(mirror, {
    kind: 'mirror',
    status: 'submitted',
    artifact_id: 'all-minilm-l6-v2',
    requester: 'ip:203.0.113.7',
    submitted_via: 'catalog_api',
    created_at: '2026-11-01T10:00:00.123Z',
  });
  t.deepEqual(mirror.details, { artifact_id: 'all-minilm-l6-v2', use_case: 'offline', target_tool: 'onnxruntime' });
  t.deepEqual(
    mirror.history.map((entry) => [entry.status, entry.actor]),
    [['submitted', 'submitter']],
  );
  const radar = await svc.operator.requests.radar({ query: { limit: 25 } });
  t.like(
    radar.data.find((entry) => entry.kind === 'source'),
    { repo: 'Org/Legacy', source: 'github', requesters: 1, latest_request_id: 'brr_89abcdef0123456789abcdef' },
  );
  const all = await svc.operator.requests.status({ query: { all_requests: true } });
  t.deepEqual(
    all.data.map((entry) => entry.request_id),
    ['brr_89abcdef0123456789abcdef', 'brr_0123456789abcdef01234567'],
  );
  t.is(
    (await svc.operator.requests.moderate({ params: { request_id: 'brr_89abcdef0123456789abcdef' }, body: { status: 'rejected', note: 'no' } })).history.length,
    2,
  );
});
