import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { FAKE_ANSWER, startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import type { DeploymentHealthInfo } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { postJson, sseData } from './helpers/inference-upstream-setup.ts';

/*
 * Several deployments of one model, each a fake OpenAI-compatible server of its own (the real
 * wire format), behind one svc: balancing, retries on a sibling, cooldowns and their probe.
 */

const COOLDOWN_MS = 2_000;
const names = [
  'a',
  'b',
  'c',
  'cool1',
  'cool2',
  'lim1',
  'lim2',
  'solo',
  'retry1',
  'retry2',
  'mid1',
  'mid2',
  'least1',
  'least2',
  'paid1',
  'paid2',
  'rep1',
  'rep2',
] as const;
type Name = (typeof names)[number];

let database: TestDatabase;
let svc: TestServer;
let openai: OpenAI;
/**
 * A second replica with the same models file: its own view of every deployment's health. Its own
 * database too (the embedded one belongs to one process), which changes nothing here: health is
 * never in the database.
 */
let replica: TestServer;
/**
 * The replica's cooldown: longer than its test's 30 calls can take on any machine, so the
 * attempts it spends on a failing deployment are exactly its failures in a row. With the 2 s of
 * the first server, a loaded run that took more than 2 s after the third failure let the
 * cooldown end and sent its one probe: a fourth attempt, as designed, that the test read as a
 * fifth of a budget of three.
 */
const REPLICA_COOLDOWN_MS = 600_000;
const fakes = {} as Record<Name, FakeUpstream>;

const deployment = (upstream: Name, extra: Record<string, unknown> = {}) => ({ upstream, ...extra });

test.before(async () => {
  for (const name of names) fakes[name] = await startFakeOpenAiUpstream({ pauseMs: 1_500 });
  database = await createTestDatabase();
  const file = path.join(database.dataDir, 'models.json');
  await writeFile(
    file,
    JSON.stringify({
      upstreams: names.map((name) => ({ id: name, base_url: fakes[name].baseUrl, timeout_ms: 2_000 })),
      models: [
        {
          id: 'spread',
          upstream_model: 'answer-spread',
          capabilities: ['chat', 'embeddings'],
          deployments: [deployment('a'), deployment('b'), deployment('c', { weight: 2 })],
        },
        { id: 'cool', upstream_model: 'answer-cool', capabilities: ['chat'], deployments: [deployment('cool1'), deployment('cool2')] },
        { id: 'limited', upstream_model: 'answer-limited', capabilities: ['chat'], deployments: [deployment('lim1'), deployment('lim2')] },
        { id: 'solo', upstream: 'solo', upstream_model: 'answer-solo', capabilities: ['chat'] },
        {
          id: 'retried',
          upstream_model: 'answer-retried',
          capabilities: ['chat'],
          deployments: [deployment('retry1', { weight: 1000 }), deployment('retry2')],
        },
        { id: 'midstream', upstream_model: 'midstream-error-x', capabilities: ['chat'], deployments: [deployment('mid1'), deployment('mid2')] },
        { id: 'replicated', upstream_model: 'answer-replicated', capabilities: ['chat'], deployments: [deployment('rep1'), deployment('rep2')] },
        { id: 'paid', upstream_model: 'answer-paid', capabilities: ['chat'], deployments: [deployment('paid1', { weight: 1000 }), deployment('paid2')] },
        {
          id: 'least',
          upstream_model: 'pause-least',
          capabilities: ['chat'],
          balancing: 'least_in_flight',
          deployments: [deployment('least1', { max_in_flight: 2 }), deployment('least2', { max_in_flight: 2 })],
        },
      ],
    }),
  );
  svc = await startTestServer({
    database,
    env: {
      SVC_MODELS_FILE: file,
      SVC_UPSTREAM_COOLDOWN_FAILURES: '3',
      SVC_UPSTREAM_COOLDOWN_MS: String(COOLDOWN_MS),
      SVC_UPSTREAM_RETRY_BACKOFF_MS: '20',
    },
  });
  openai = new OpenAI({ baseURL: `${svc.baseUrl}/v1`, apiKey: svc.operatorToken, maxRetries: 0 });
  replica = await startTestServer({
    env: {
      SVC_MODELS_FILE: file,
      SVC_UPSTREAM_COOLDOWN_FAILURES: '3',
      SVC_UPSTREAM_COOLDOWN_MS: String(REPLICA_COOLDOWN_MS),
      SVC_UPSTREAM_RETRY_BACKOFF_MS: '20',
    },
  });
});

test.after.always(async () => {
  await replica?.close();
  await svc?.close();
  await database?.drop();
  await Promise.all(Object.values(fakes).map((fake) => fake.close()));
});

const chat = (model: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi there' }] });

/** When the fake finished answering a request, on the wall clock (it records performance.now(), in this process). */
/** Date.now()'s reading at a performance.now() instant. */
const wallClockOf = (instant: number) => Date.now() - (performance.now() - instant);
const answeredAt = (request: { finishedAt?: number }) => wallClockOf(request.finishedAt!);

async function health(model: string): Promise<DeploymentHealthInfo[]> {
  const answer = await svc.operator.upstreams.health();
  return answer.data.filter((item) => item.model === model);
}

test('three deployments weighted 1:1:2 share 400 calls within 40 calls of 100:100:200 (over 4 standard deviations)', async (t) => {
  const before = { a: fakes.a.requests.length, b: fakes.b.requests.length, c: fakes.c.requests.length };
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        // Each input its own, so no answer is served from svc's response cache.
        index % 2 === 0 ? chat('spread') : openai.embeddings.create({ model: 'spread', input: `spread me ${batch} ${index}`, encoding_format: 'float' }),
      ),
    );
  }
  const counts = { a: fakes.a.requests.length - before.a, b: fakes.b.requests.length - before.b, c: fakes.c.requests.length - before.c };
  t.log(`a ${counts.a}, b ${counts.b}, c ${counts.c}`);
  t.is(counts.a + counts.b + counts.c, 400, 'each call went to exactly one deployment');
  t.true(Math.abs(counts.a - 100) <= 40, `a: ${counts.a}`);
  t.true(Math.abs(counts.b - 100) <= 40, `b: ${counts.b}`);
  t.true(Math.abs(counts.c - 200) <= 40, `c: ${counts.c}`);
  t.is(fakes.c.requests.at(-1)!.body.model, 'answer-spread', "the deployment's upstream model name is sent");
});

test('a deployment failing 3 times in a row cools down: no traffic, then exactly one probe; a failed probe doubles the cooldown; a good one restores it', async (t) => {
  fakes.cool2.setOutage({ status: 500 });
  // Every call succeeds: a failure on cool2 is retried on cool1 before the first byte.
  let checkedBelow = false;
  await waitUntil('cool2 failed 3 times', async () => {
    const completion = await chat('cool');
    t.is(completion.choices[0]!.message.content, FAKE_ANSWER);
    if (fakes.cool2.requests.length === 2 && !checkedBelow) {
      checkedBelow = true;
      t.is((await health('cool'))[1]!.state, 'healthy', 'two failures in a row: still taking calls');
    }
    return fakes.cool2.requests.length >= 3;
  });
  t.true(checkedBelow);
  t.is(fakes.cool2.requests.length, 3);
  const [, cooling] = await health('cool');
  t.is(cooling!.state, 'cooling_down');
  t.is(cooling!.consecutive_failures, 3);
  const until = Date.parse(cooling!.cooldown_until!);
  t.true(until - Date.now() > COOLDOWN_MS - 1_000, 'the first cooldown lasts SVC_UPSTREAM_COOLDOWN_MS');

  let during = 0;
  while (Date.now() < until - 300) {
    await chat('cool');
    during++;
  }
  t.true(during >= 5, `${during} calls during the cooldown`);
  t.is(fakes.cool2.requests.length, 3, 'no call went to the cooling deployment');

  // Its cooldown over, calls in parallel: exactly one is its probe; it fails again.
  await waitUntil('the cooldown ended', () => Date.now() > until + 20);
  await Promise.all(Array.from({ length: 10 }, () => chat('cool')));
  await Promise.all(Array.from({ length: 10 }, () => chat('cool')));
  t.is(fakes.cool2.requests.length, 4, 'exactly one probe');
  const [, again] = await health('cool');
  t.is(again!.state, 'cooling_down');
  t.is(again!.cooldowns_in_row, 2);
  const second = Date.parse(again!.cooldown_until!) - answeredAt(fakes.cool2.requests[3]!);
  t.true(second > 2 * COOLDOWN_MS - 100 && second < 2 * COOLDOWN_MS + 1_000, `the second cooldown lasts twice the first (${second} ms)`);

  // Healed: after the second cooldown, its one probe succeeds and it takes traffic again.
  fakes.cool2.setOutage(undefined);
  await waitUntil('the second cooldown ended', () => Date.now() > Date.parse(again!.cooldown_until!) + 20, { timeoutMs: 10_000 });
  await waitUntil('the probe reached cool2', async () => {
    await chat('cool');
    return fakes.cool2.requests.length === 5;
  });
  const [, restored] = await health('cool');
  t.is(restored!.state, 'healthy');
  t.is(restored!.cooldown_until, null);
  await Promise.all(Array.from({ length: 40 }, () => chat('cool')));
  t.true(fakes.cool2.requests.length - 5 >= 5, `restored, it gets its share (${fakes.cool2.requests.length - 5} of 40)`);

  const metrics = await (await fetch(`${svc.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${svc.operatorToken}` } })).text();
  t.regex(metrics, /svc_upstream_deployment_cooldowns_total\{model="cool",upstream="cool2",upstream_model="answer-cool",reason="failures"\} 1/);
  t.regex(metrics, /svc_upstream_deployment_cooldowns_total\{model="cool",upstream="cool2",upstream_model="answer-cool",reason="probe_failed"\} 1/);
  t.regex(metrics, /svc_upstream_deployment_calls_total\{model="cool",upstream="cool2",upstream_model="answer-cool",outcome="error"\} 4/);
  t.regex(metrics, /svc_upstream_deployment_latency_seconds_count\{model="cool",upstream="cool2",upstream_model="answer-cool"\} \d+/);
  t.regex(metrics, /svc_upstream_deployment_state\{model="cool",upstream="cool2",upstream_model="answer-cool",state="healthy"\} 1/);
});

test('a 429 with Retry-After cools that deployment for exactly that long, while its sibling serves every call', async (t) => {
  fakes.lim1.setOutage({ status: 429, retryAfter: '3' });
  await waitUntil('lim1 was tried', async () => {
    const completion = await chat('limited');
    t.is(completion.choices[0]!.message.content, FAKE_ANSWER, 'the 429 was retried on the sibling');
    return fakes.lim1.requests.length === 1;
  });
  const [cooling] = await health('limited');
  t.is(cooling!.state, 'cooling_down');
  const wait = Date.parse(cooling!.cooldown_until!) - answeredAt(fakes.lim1.requests[0]!);
  t.true(wait > 2_900 && wait < 4_000, `cooled for the Retry-After's 3 s (${wait} ms), not SVC_UPSTREAM_COOLDOWN_MS`);
  // Judged by when each call reached lim1, not by how many did: on a slow machine the 30 calls
  // may still be going when the cooldown ends, and then a probe rightly goes to lim1.
  const until = Date.parse(cooling!.cooldown_until!);
  const sentFrom = Date.now();
  await Promise.all(Array.from({ length: 30 }, () => chat('limited')));
  t.true(sentFrom < until, 'the calls began inside the cooldown');
  const early = fakes.lim1.requests.slice(1).filter((request) => wallClockOf(request.receivedAt) < until);
  t.is(early.length, 0, 'nothing went to the rate-limited deployment during its cooldown');
});

test('a lone deployment answering 429 with Retry-After: the caller is told when to retry, and nothing goes upstream until then', async (t) => {
  fakes.solo.setOutage({ status: 429, retryAfter: '4' });
  const first = await postJson(svc, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'hi' }] });
  t.is(first.status, 502);
  t.is(first.headers.get('retry-after'), '4');
  const body = (await first.json()) as { code: string; retryable: boolean };
  t.is(body.code, 'upstream_error');
  t.true(body.retryable);
  const second = await postJson(svc, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'hi' }] });
  t.is(second.status, 502, 'the same failure, repeated while it cools down');
  const left = Number(second.headers.get('retry-after'));
  t.true(left >= 1 && left <= 4, `Retry-After counts down to the cooldown's end (${left} s)`);
  t.regex(((await second.json()) as { error: string }).error, /cooling down/);
  t.is(fakes.solo.requests.length, 1, 'the second call did not go upstream');
  fakes.solo.setOutage(undefined);
});

test('a failure before the first byte (connection dropped, then a 503) is retried on a sibling: the client sees one success, JSON and streamed', async (t) => {
  fakes.retry1.setOutage('drop');
  const completion = await chat('retried');
  t.is(completion.choices[0]!.message.content, FAKE_ANSWER);
  t.is(fakes.retry1.requests.length, 1, 'the heavy deployment was tried first');
  t.is(fakes.retry2.requests.length, 1, 'and the call retried on its sibling');

  fakes.retry1.setOutage({ status: 503 });
  const stream = await openai.chat.completions.create({ model: 'retried', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.is(text, FAKE_ANSWER);
  t.is(fakes.retry1.requests.length, 2);
  t.is(fakes.retry2.requests.length, 2);
  fakes.retry1.setOutage(undefined);
});

test('a failure mid-stream is not retried: one upstream call, and the client gets the error chunk as before', async (t) => {
  const response = await postJson(svc, '/v1/chat/completions', { model: 'midstream', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.is(response.status, 200);
  const data = sseData(await response.text());
  const last = data.at(-2) as { error: { code: string; message: string } };
  t.is(last.error.code, 'upstream_error');
  t.regex(last.error.message, /crashed/);
  t.is(fakes.mid1.requests.length + fakes.mid2.requests.length, 1, 'exactly one upstream call');
  const items = await health('midstream');
  t.is(
    items.reduce((sum, item) => sum + item.failures, 0),
    1,
    'the broken stream counts against its deployment',
  );
});

test('least in flight sends concurrent calls to the idler deployment; max_in_flight: 2 per deployment take 4 calls, the fifth is a 503 upstream_unavailable', async (t) => {
  const streams = [] as Response[];
  for (let index = 0; index < 4; index++) {
    // Each holds its slot for the fake's 1.5 s pause after the first chunk.
    streams.push(await postJson(svc, '/v1/chat/completions', { model: 'least', messages: [{ role: 'user', content: 'hold' }], stream: true }));
  }
  t.is(fakes.least1.requests.length, 2, 'least in flight alternates');
  t.is(fakes.least2.requests.length, 2);
  const items = await health('least');
  t.deepEqual(
    items.map((item) => item.in_flight),
    [2, 2],
  );
  const refused = await postJson(svc, '/v1/chat/completions', { model: 'least', messages: [{ role: 'user', content: 'one more' }] });
  t.is(refused.status, 503);
  const body = (await refused.json()) as { code: string; retryable: boolean };
  t.is(body.code, 'upstream_unavailable');
  t.true(body.retryable);
  t.is(fakes.least1.requests.length + fakes.least2.requests.length, 4, 'the fifth call reached no deployment');
  for (const stream of streams) t.true((await stream.text()).includes('[DONE]'), 'the held streams end whole');
  await waitUntil('the slots are given back', async () => (await health('least')).every((item) => item.in_flight === 0));
  // A client that leaves mid-stream gives its slot back too, and says nothing of the deployment's health.
  const leaving = new AbortController();
  const left = await postJson(
    svc,
    '/v1/chat/completions',
    { model: 'least', messages: [{ role: 'user', content: 'bye' }], stream: true },
    { signal: leaving.signal },
  );
  t.is(left.status, 200);
  t.is(
    (await health('least')).reduce((sum, item) => sum + item.in_flight, 0),
    1,
  );
  leaving.abort();
  await waitUntil('the slot of the client that left is given back', async () => (await health('least')).every((item) => item.in_flight === 0));
  t.true((await health('least')).every((item) => item.failures === 0));
});

test('the health route is operator-only, and lists every deployment with its figures', async (t) => {
  const anonymous = await fetch(`${svc.baseUrl}/v1/upstreams/health`);
  t.is(anonymous.status, 401);
  const answer = await svc.operator.upstreams.health();
  t.is(answer.scope, 'process');
  t.deepEqual(
    answer.data.filter((item) => item.model === 'spread').map((item) => [item.upstream, item.weight]),
    [
      ['a', 1],
      ['b', 1],
      ['c', 2],
    ],
  );
  const [first] = await health('spread');
  t.true(first!.calls > 0);
  t.is(typeof first!.recent.latency_ms_p50, 'number');
  t.is(first!.recent.error_rate, 0);
  t.false(JSON.stringify(answer).includes('127.0.0.1'), 'no address is shown');
});

test('a paid call (credits) retried on a sibling is charged once, with one usage row', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  const sequelize = svc.server.database.sequelize;
  await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agent.id, 3, `deployments-grant-${agent.id}`));
  const client = svc.client({ token: key.secret });
  fakes.paid1.setOutage({ status: 500 });
  const paid = await fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'idempotency-key': 'paid-once' },
    body: JSON.stringify({ model: 'paid', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(paid.status, 200);
  t.is(((await paid.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, FAKE_ANSWER);
  t.is(fakes.paid1.requests.length, 1, 'the first deployment failed');
  t.is(fakes.paid2.requests.length, 1, 'its sibling answered');
  t.like(await client.billing.balance(), { spendable: 2, reserved: 0 });
  const usage = await client.billing.usage();
  if (usage instanceof Response) return t.fail('expected JSON');
  t.is(usage.data.length, 1);
  t.like(usage.data[0], { credits: 1, model: 'paid', idempotency_key: 'paid-once' });
  fakes.paid1.setOutage(undefined);
});

test('health is per replica: another replica still tries a deployment the first one cools, spends exactly 3 attempts on it, and its callers all succeed', async (t) => {
  fakes.rep2.setOutage({ status: 502 });
  await waitUntil('the first replica cooled rep2', async () => {
    await chat('replicated');
    return fakes.rep2.requests.length >= 3;
  });
  const first = (await svc.operator.upstreams.health()).data.find((item) => item.upstream === 'rep2')!;
  t.is(first.state, 'cooling_down');
  const second = (await replica.operator.upstreams.health()).data.find((item) => item.upstream === 'rep2')!;
  t.like(second, { state: 'healthy', calls: 0 }, "the other replica has not heard of it: the state is each process's own");

  const replicaChat = new OpenAI({ baseURL: `${replica.baseUrl}/v1`, apiKey: replica.operatorToken, maxRetries: 0 });
  const before = fakes.rep2.requests.length;
  const started = performance.now();
  for (let call = 0; call < 30; call++) {
    const completion = await replicaChat.chat.completions.create({ model: 'replicated', messages: [{ role: 'user', content: 'hi' }] });
    t.is(completion.choices[0]!.message.content, FAKE_ANSWER, 'every caller of the second replica gets an answer');
  }
  const elapsed = performance.now() - started;
  t.true(elapsed < REPLICA_COOLDOWN_MS, 'the calls ended inside the cooldown, so no probe was due');
  const spent = fakes.rep2.requests.length - before;
  t.is(spent, 3, `the second replica spent ${spent} attempts: SVC_UPSTREAM_COOLDOWN_FAILURES, then none while it cools`);
  t.like(
    (await replica.operator.upstreams.health()).data.find((item) => item.upstream === 'rep2'),
    { state: 'cooling_down', calls: 3, failures: 3 },
    'the replica cooled it after its own three failures',
  );
  t.log(`second replica: ${spent} attempts on the failing deployment in ${Math.round(elapsed)} ms, each retried on its sibling`);
  fakes.rep2.setOutage(undefined);
});
