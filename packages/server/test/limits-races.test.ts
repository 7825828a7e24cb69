import test from 'ava';
import { QueryTypes } from 'sequelize';
import { a2aLimits, tokenReservation } from '@svc/schemas';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The limits under a race (docs/limits.md, "Under a burst"): for each limit, 50 calls sent at once,
 * alternately to two replicas (this test's server and a child process on one PostgreSQL; on the
 * embedded database, which cannot be shared, both are the one server), are served at most to the
 * limit plus its documented overshoot: requests per minute exact (a shared Idempotency-Key too),
 * concurrency exact, credits per day exact, A2A running tasks exact, tokens per minute within one
 * call's estimate. Calls that must overlap pause PAUSE_MS upstream: longer than a burst takes to
 * be admitted, so none ends (and frees its place) before the last is decided.
 */
const BURST = 50;
const PAUSE_MS = 3000;
let database: TestDatabase;
let fake: FakeUpstream;
let svc: TestServer;
let replica: ServerProcess | undefined;
let urls: [string, string] = ['', ''];

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream({ pauseMs: PAUSE_MS });
  const env = {
    SVC_SIGNING_SECRET: 'limits-races-secret-0123456789-abcdefghij',
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_API_KEY: 'sk-fake',
    SVC_UPSTREAM_MODELS: 'answer-a,pause-a,hang-a=rerank',
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
  if (into > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 100));
}

async function keyWith(limits: Record<string, number>) {
  const agent = await signInAgent(svc);
  const created = await agent.client.credentials.create({
    body: { name: 'races', scopes: ['models:read', 'inference:invoke', 'billing:read', 'billing:write'], limits },
  });
  return { agent, credentialId: created.credential.credential_id, secret: created.secret };
}

/** BURST calls at once, alternately to each replica; each answers its status and code. */
const burst = (call: (url: string, index: number) => Promise<Response>) =>
  Promise.all(
    Array.from({ length: BURST }, async (_, index) => {
      const response = await call(urls[index % 2]!, index);
      const text = await response.text();
      let code: string | undefined;
      try {
        code = (JSON.parse(text) as { code?: string; error?: { data?: { code?: string } } }).code;
      } catch {}
      return { status: response.status, code, text };
    }),
  );

const post = (url: string, path: string, secret: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'answer-a', messages: [{ role: 'user', content: 'hello there' }], ...extra });

const served = (results: { status: number }[]) => results.filter((result) => result.status === 200).length;

test.serial(`requests per minute: a limit of 10 serves exactly 10 of ${BURST}, with or without one shared Idempotency-Key`, async (t) => {
  await inOneMinuteWindow();
  const plain = await keyWith({ requests_per_minute: 10 });
  const plainResults = await burst((url) => post(url, '/v1/chat/completions', plain.secret, chatBody()));
  t.is(served(plainResults), 10);
  t.true(
    plainResults.filter((result) => result.status !== 200).every((result) => result.status === 429 && result.code === 'key_limit_exceeded:requests_per_minute'),
  );
  // A caller-chosen header is no pass: chat stores no answer to replay, so each call is a request.
  const reused = await keyWith({ requests_per_minute: 10 });
  const reusedResults = await burst((url) => post(url, '/v1/chat/completions', reused.secret, chatBody(), { 'idempotency-key': 'the-same-every-time' }));
  t.is(served(reusedResults), 10);
});

test.serial(`concurrent requests: a limit of 3 serves exactly 3 of ${BURST} calls that overlap`, async (t) => {
  const { secret } = await keyWith({ concurrent_requests: 3 });
  const started = performance.now();
  const results = await burst((url) => post(url, '/v1/chat/completions', secret, chatBody({ model: 'pause-a', stream: true })));
  t.true(performance.now() - started < PAUSE_MS * 2, 'the burst was admitted within one pause');
  t.is(served(results), 3, results.map((result) => result.status).join(' '));
  t.true(results.filter((result) => result.status !== 200).every((result) => result.code === 'key_limit_exceeded:concurrent_requests'));
});

test.serial(`tokens per minute: ${BURST} calls that overlap reserve within the limit plus one call's estimate`, async (t) => {
  await inOneMinuteWindow();
  const limit = 2000;
  const { secret } = await keyWith({ tokens_per_minute: limit });
  const body = chatBody({ model: 'pause-a', stream: true, max_tokens: 100 });
  const estimate = 100 + Math.ceil(Buffer.byteLength(JSON.stringify(body)) / tokenReservation.bytesPerInputToken);
  const results = await burst((url) => post(url, '/v1/chat/completions', secret, body));
  const count = served(results);
  t.log(`estimate ${estimate} tokens a call: ${count} of ${BURST} served under a limit of ${limit}`);
  t.true(count >= 1);
  t.true(count * estimate <= limit + estimate, `${count} calls reserved ${count * estimate} tokens`);
  t.true(results.filter((result) => result.status !== 200).every((result) => result.code === 'key_limit_exceeded:tokens_per_minute'));
});

test.serial(`credits per day: a cap of 5 serves exactly 5 of ${BURST} credit-funded calls`, async (t) => {
  const { agent, credentialId, secret } = await keyWith({ credits_per_day: 5 });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, 100, `races-grant-${agent.id}`));
  const results = await burst((url, index) => post(url, '/v1/credits/chat/completions', secret, chatBody(), { 'idempotency-key': `race-${index}` }));
  t.is(served(results), 5);
  t.true(results.filter((result) => result.status !== 200).every((result) => result.code === 'key_limit_exceeded:credits_per_day'));
  const [receipts] = await sequelize().query<{ count: number }>('SELECT count(*)::int AS count FROM billing_receipts WHERE credential_id = :credentialId', {
    replacements: { credentialId },
    type: QueryTypes.SELECT,
  });
  t.is(receipts!.count, 5);
});

test.serial(`A2A running tasks: ${BURST} background tasks sent at once start exactly ${a2aLimits.maxRunningPerPrincipal}`, async (t) => {
  const { secret } = await keyWith({});
  const send = (index: number) => ({
    jsonrpc: '2.0',
    id: index,
    method: 'message/send',
    params: {
      message: {
        messageId: `race-${index}`,
        role: 'user',
        parts: [{ kind: 'data', data: { skill: 'rerank', model: 'hang-a', query: 'who', documents: ['Ada wrote it.', 'Bo read it.'] } }],
      },
      configuration: { blocking: false },
    },
  });
  const results = await burst((url, index) => post(url, '/a2a', secret, send(index)));
  t.is(served(results), a2aLimits.maxRunningPerPrincipal, results.map((result) => result.status).join(' '));
  for (const result of results.filter((each) => each.status !== 200)) {
    t.is(result.status, 429);
    t.is((JSON.parse(result.text) as { error: { data: { code: string } } }).error.data.code, 'a2a_tasks_running');
  }
  // The accepted tasks wait on an upstream that never answers (hang-a reranks): canceling them aborts their work.
  for (const result of results.filter((each) => each.status === 200)) {
    const taskId = (JSON.parse(result.text) as { result: { id: string; status: { state: string } } }).result;
    t.is(taskId.status.state, 'working');
    const canceled = await post(urls[0], '/a2a', secret, { jsonrpc: '2.0', id: 'c', method: 'tasks/cancel', params: { id: taskId.id } });
    const answer = (await canceled.json()) as { result?: { status: { state: string } } };
    t.is(answer.result?.status.state, 'canceled', JSON.stringify(answer));
  }
});
