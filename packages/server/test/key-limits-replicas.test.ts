import test from 'ava';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Limits per key on two server processes sharing one PostgreSQL: this test's server and a
 * child process, hit at once, each request to either. The embedded database cannot be shared,
 * so there both "replicas" are the one server (the same counts under the same concurrency).
 */
const PAUSE_MS = 5000;
let database: TestDatabase;
let fake: FakeUpstream;
let svc: TestServer;
let replica: ServerProcess | undefined;
let urls: [string, string] = ['', ''];

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream({ pauseMs: PAUSE_MS });
  const env = {
    SVC_SIGNING_SECRET: 'key-limits-replicas-secret-0123456789-abcdef',
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_API_KEY: 'sk-fake',
    SVC_UPSTREAM_MODELS: 'answer-a,pause-a',
  };
  svc = await startTestServer({ database, env });
  if (database.kind === 'postgres') replica = await startServerProcess(database, env);
  urls = [svc.baseUrl, replica?.baseUrl ?? svc.baseUrl];
});
test.after.always(async () => {
  killAllServerProcesses();
  await svc?.close();
  await fake?.close();
  await database?.drop();
});

const sequelize = () => svc.server.database.sequelize;

/** Waits out the end of a minute window so a burst is counted in one window. */
async function inOneMinuteWindow(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 100));
}

async function keyWith(limits: Record<string, number>) {
  const agent = await signInAgent(svc);
  const created = await agent.client.credentials.create({
    body: { name: 'replicas', scopes: ['models:read', 'inference:invoke', 'billing:read', 'billing:write'], limits },
  });
  return { agent, credentialId: created.credential.credential_id, secret: created.secret };
}

const both = <T>(count: number, call: (url: string, index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => call(urls[index % 2]!, index)));

const chat = (url: string, secret: string, body: Record<string, unknown>, headers: Record<string, string> = {}, path = '/v1/chat/completions') =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content: 'hello there' }], ...body }),
  });

test.serial('a key limited to 10 requests a minute gets exactly 10 of 30 concurrent calls; the rest get 429 with the headers', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ requests_per_minute: 10 });
  const responses = await both(30, async (url) => {
    const response = await chat(url, secret, {});
    return { status: response.status, headers: response.headers, body: (await response.json()) as { code?: string } };
  });
  const passed = responses.filter((response) => response.status === 200);
  const refused = responses.filter((response) => response.status === 429);
  t.is(passed.length, 10);
  t.is(refused.length, 20);
  t.deepEqual(
    passed.map((response) => Number(response.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  for (const response of refused) {
    t.is(response.body.code, 'key_limit_exceeded:requests_per_minute');
    t.is(response.headers.get('x-ratelimit-limit-requests'), '10');
    t.is(response.headers.get('x-ratelimit-remaining-requests'), '0');
    const reset = response.headers.get('x-ratelimit-reset-requests')!;
    t.regex(reset, /^(\d+(\.\d+)?s|\d+ms)$/);
    const retryAfter = Number(response.headers.get('retry-after'));
    t.true(retryAfter >= 1 && retryAfter <= 60);
    t.true(Math.abs(Number(response.headers.get('retry-after-ms')) / 1000 - Number.parseFloat(reset) * (reset.endsWith('ms') ? 0.001 : 1)) < 1);
  }
});

test.serial(
  'a busy key, counted in chunks of slots on each replica (while its minute has 256 or more left), gets exactly 1,100 of 1,200 calls; the minute ends at 1,100 with none lent',
  async (t) => {
    t.timeout(120_000);
    const into = Date.now() % 60_000;
    if (into > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 100));
    const { credentialId, secret } = await keyWith({ requests_per_minute: 1_100 });
    const statuses: number[] = [];
    for (let batch = 0; batch < 60; batch++) {
      statuses.push(
        ...(await both(20, async (url) => {
          const response = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
          await response.arrayBuffer();
          return response.status;
        })),
      );
    }
    t.is(statuses.filter((status) => status === 200).length, 1_100);
    t.is(statuses.filter((status) => status === 429).length, 100);
    const counter = async () => {
      const [row] = await sequelize().query<{ hits: string; amount: string }>(
        `SELECT hits, amount FROM svc_rate_counters WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`,
        { replacements: { bucket: `limits:rpm:key:${credentialId}` }, type: QueryTypes.SELECT },
      );
      return { hits: Number(row?.hits), lent: Number(row?.amount) };
    };
    const deadline = Date.now() + 5_000;
    while ((await counter()).lent !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    t.deepEqual(await counter(), { hits: 1_100, lent: 0 });
  },
);

test.serial('a concurrency limit of 2 holds under 20 parallel streams, and the places come back when they end', async (t) => {
  const { credentialId, secret } = await keyWith({ concurrent_requests: 2 });
  const started = performance.now();
  const results = await both(20, async (url) => {
    const response = await chat(url, secret, { model: 'pause-a', stream: true });
    const text = await response.text();
    return { status: response.status, text };
  });
  // Every request arrived while the first two were still in their pause: two ran, the rest were refused.
  t.true(performance.now() - started < PAUSE_MS * 2, 'the burst arrived within one pause');
  t.is(results.filter((result) => result.status === 200).length, 2, results.map((result) => result.status).join(' '));
  const refused = results.filter((result) => result.status === 429);
  t.is(refused.length, 18);
  for (const result of refused) t.is((JSON.parse(result.text) as { code: string }).code, 'key_limit_exceeded:concurrent_requests');
  for (const result of results.filter((each) => each.status === 200)) t.true(result.text.includes('data: [DONE]'));
  // Both places were given back: a place is deleted as its response closes, by the replica that
  // held it, which may come a few milliseconds after the client read the end (at load 10, after a
  // busy test, once 40 ms after). Then two more run at once again, one on each replica.
  const leasesLeft = async () => {
    const [row] = await sequelize().query<{ count: number }>('SELECT count(*)::int AS count FROM svc_limit_leases WHERE subject = :subject', {
      replacements: { subject: `key:${credentialId}` },
      type: QueryTypes.SELECT,
    });
    return row!.count;
  };
  const deadline = Date.now() + 2_000;
  while ((await leasesLeft()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.is(await leasesLeft(), 0, 'both places were given back within 2 s of the streams ending');
  const again = await both(2, (url) => chat(url, secret, {}).then((response) => response.status));
  t.deepEqual(again, [200, 200]);
});

test.serial('a credit cap of 5 a day stops at exactly 5 of 50 concurrent credit-funded calls; ledger, receipts and usage agree', async (t) => {
  const { agent, credentialId, secret } = await keyWith({ credits_per_day: 5 });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, 100, `replicas-grant-${agent.id}`));
  const responses = await both(50, async (url, index) => {
    const response = await chat(url, secret, {}, { 'idempotency-key': `cap-${index}` }, '/v1/credits/chat/completions');
    return { status: response.status, body: (await response.json()) as { code?: string } };
  });
  t.is(responses.filter((response) => response.status === 200).length, 5);
  const refused = responses.filter((response) => response.status === 429);
  t.is(refused.length, 45);
  for (const response of refused) t.is(response.body.code, 'key_limit_exceeded:credits_per_day');
  const [account] = await sequelize().query<{ spendable: string; reserved: string }>(
    'SELECT spendable, reserved FROM billing_accounts WHERE principal_id = :id',
    {
      replacements: { id: agent.id },
      type: QueryTypes.SELECT,
    },
  );
  t.deepEqual([Number(account!.spendable), Number(account!.reserved)], [95, 0]);
  const [ledger] = await sequelize().query<{ spendable: string; reserved: string }>(
    'SELECT sum(spendable_delta) AS spendable, sum(reserved_delta) AS reserved FROM billing_ledger WHERE principal_id = :id',
    { replacements: { id: agent.id }, type: QueryTypes.SELECT },
  );
  t.deepEqual([Number(ledger!.spendable), Number(ledger!.reserved)], [95, 0]);
  const [receipts] = await sequelize().query<{ count: number; credits: number }>(
    'SELECT count(*)::int AS count, sum(credits)::int AS credits FROM billing_receipts WHERE credential_id = :credentialId',
    { replacements: { credentialId }, type: QueryTypes.SELECT },
  );
  t.deepEqual({ ...receipts }, { count: 5, credits: 5 });
  const usage = await agent.client.credentials.usage({ params: { credential_id: credentialId }, query: { limit: 10 } });
  t.is(
    usage.data.reduce((sum, row) => sum + row.credits, 0),
    5,
  );
});

test.serial('a PATCH takes effect on the next request on both replicas', async (t) => {
  await inOneMinuteWindow();
  const { agent, credentialId, secret } = await keyWith({ requests_per_minute: 1 });
  const models = (url: string) => fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } }).then((response) => response.status);
  t.is(await models(urls[0]), 200);
  t.is(await models(urls[1]), 429);
  await agent.client.credentials.update({ params: { credential_id: credentialId }, body: { limits: { requests_per_minute: 3 } } });
  t.is(await models(urls[1]), 200);
  t.is(await models(urls[0]), 200);
  t.is(await models(urls[1]), 429);
});

test.serial('the openai client, given a 429 with these headers, retries after the reset and succeeds', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ requests_per_minute: 1 });
  const statuses: number[] = [];
  // The library as it is; the fetch it is given only notes each status on the way through.
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  const openai = new OpenAI({ baseURL: `${urls[1]}/v1`, apiKey: secret, maxRetries: 2, timeout: 90_000, fetch: recordingFetch });
  t.is((await chat(urls[0], secret, {})).status, 200);
  const resetAt = Date.now() + (60_000 - (Date.now() % 60_000));
  const completion = await openai.chat.completions.create({ model: 'answer-a', messages: [{ role: 'user', content: 'after the reset' }] });
  t.true(completion.choices[0]!.message.content!.length > 0);
  t.deepEqual(statuses, [429, 200], 'one refusal, then one retry that succeeded');
  t.true(Date.now() >= resetAt - 50, 'the retry waited for the window to reset');
});
