import test from 'ava';
import { MAX_USAGE_REPORT_DAYS } from '@svc/schemas';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';

/**
 * The operator's usage report (issue 45): every key's use over a range of UTC days, per day,
 * per model and per key, from real calls through a fake OpenAI-compatible upstream; the range's
 * edges (92 days pass, 93 are 422) and who may ask.
 */
let fake: FakeUpstream;
let svc: TestServer;
test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-fake', SVC_UPSTREAM_MODELS: 'answer-a,answer-b' },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const sequelize = () => svc.server.database.sequelize;
const today = () => new Date().toISOString().slice(0, 10);
const daysBefore = (day: string, count: number) => new Date(Date.parse(`${day}T00:00:00Z`) - count * 86_400_000).toISOString().slice(0, 10);

const chat = (secret: string, model: string, path = '/v1/chat/completions', headers: Record<string, string> = {}) =>
  fetch(`${svc.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'a few words' }] }),
  }).then((answer) => answer.status);

test('the report sums every key’s calls per day, per model and per key, busiest first; a day outside the range is left out', async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const scopes = ['models:read', 'inference:invoke', 'billing:read', 'billing:write'] as const;
  const spender = await alice.client.developerKeys.create({ body: { name: 'alice spender', scopes: [...scopes] } });
  const caller = await bob.client.developerKeys.create({ body: { name: 'bob caller', scopes: [...scopes] } });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, alice.id, 10, `grant-${alice.id}`));
  t.is(await chat(spender.secret, 'answer-a', '/v1/credits/chat/completions', { 'idempotency-key': 'r-1' }), 200);
  for (let call = 0; call < 3; call++) t.is(await chat(caller.secret, 'answer-b'), 200);
  // A day long past, outside the default range (the 30 days up to today).
  await sequelize().query(
    `INSERT INTO svc_developer_key_usage (credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits)
     VALUES (:id, :day, 'answer-a', 7, 1, 1, 2, 5)`,
    { replacements: { id: caller.credential.credential_id, day: daysBefore(today(), 40) } },
  );

  const report = await svc.operator.developerKeys.usageReport();
  t.is(report.to, today());
  t.is(report.from, daysBefore(today(), 29));
  t.is(report.totals.requests, 4);
  t.deepEqual(
    report.by_day.map((day) => [day.day, day.requests]),
    [[today(), 4]],
  );
  t.deepEqual(
    report.by_model.map((model) => [model.model, model.requests]),
    [
      ['answer-a', 1],
      ['answer-b', 3],
    ],
    'credits first: the one credit-funded call outranks three free ones',
  );
  t.true(report.by_model[0]!.credits > 0);
  t.deepEqual(
    report.by_key.map((key) => [key.name, key.owner, key.requests]),
    [
      ['alice spender', alice.id, 1],
      ['bob caller', bob.id, 3],
    ],
  );
  t.false(report.keys_truncated);
  t.false(report.models_truncated);

  // The range widened to the old day takes it in.
  const wide = await svc.operator.developerKeys.usageReport({ query: { from: daysBefore(today(), 40), to: today() } });
  t.is(wide.totals.requests, 11);
  t.is(wide.by_day[0]!.day, daysBefore(today(), 40), 'oldest day first');
});

test('the range: 92 days pass, 93 and from after to are 422; only the operator may ask', async (t) => {
  const to = today();
  const longest = await svc.operator.developerKeys.usageReport({ query: { from: daysBefore(to, MAX_USAGE_REPORT_DAYS - 1), to } });
  t.is(longest.from, daysBefore(to, 91));
  const status = (promise: Promise<unknown>) =>
    promise.then(
      () => 200,
      (error: { status?: number; code?: string }) => `${error.status} ${error.code}`,
    );
  t.is(await status(svc.operator.developerKeys.usageReport({ query: { from: daysBefore(to, MAX_USAGE_REPORT_DAYS), to } })), '422 validation_failed');
  t.is(await status(svc.operator.developerKeys.usageReport({ query: { from: to, to: daysBefore(to, 1) } })), '422 validation_failed');
  t.is(await status(svc.operator.developerKeys.usageReport({ query: { from: '2026-02-30' } })), '422 validation_failed');
  t.is(await status(svc.operator.developerKeys.usageReport({ query: { from: daysBefore(to, 200) } })), '422 validation_failed', 'from alone, to today');
  const agent = await signInAgent(svc);
  t.is(await status(agent.client.developerKeys.usageReport()), '403 principal_not_allowed');
});
