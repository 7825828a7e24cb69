import test from 'ava';
import { QueryTypes } from 'sequelize';
import { FAKE_ANSWER, startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';

/**
 * Issue 43: receipts of streamed credit calls recorded 0 tokens when the caller did not set
 * `stream_options.include_usage`. Over an upstream (billing-credits.test.ts covers the built-in
 * engine), svc asks the upstream for usage anyway, strips it from the caller's stream, and the
 * receipt and the key's usage both count the tokens the upstream reported.
 */
let fake: FakeUpstream;
let svc: TestServer;
test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({ env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-fake', SVC_UPSTREAM_MODELS: 'answer-a' } });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

test('a streamed credit call over an upstream without include_usage: the upstream is asked, the caller gets none, the receipt and the key count the tokens', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  const sequelize = svc.server.database.sequelize;
  await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agent.id, 2, `grant-${agent.id}`));
  const question = 'three word question';
  const response = await fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'idempotency-key': 'stream-upstream' },
    body: JSON.stringify({ model: 'answer-a', stream: true, messages: [{ role: 'user', content: question }] }),
  });
  t.is(response.status, 200);
  const chunks = (await response.text())
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: {'))
    .map((frame) => JSON.parse(frame.slice(6)) as { usage?: unknown });
  t.true(chunks.length > 0);
  t.false(
    chunks.some((chunk) => 'usage' in chunk),
    'the caller did not ask for usage: none is sent',
  );
  const asked = fake.requests.filter((request) => request.body.model === 'answer-a' && request.body.stream === true).at(-1);
  t.deepEqual(asked?.body.stream_options, { include_usage: true }, 'svc asks the upstream for usage the caller did not');

  const prompt = question.split(' ').length;
  const completion = FAKE_ANSWER.split(/(?<= )/).length;
  const expected = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const receipts = await svc.client({ token: key.secret }).billing.usage();
  if (receipts instanceof Response) return t.fail('expected JSON');
  const receipt = receipts.data.find((row) => row.idempotency_key === 'stream-upstream');
  t.like(receipt?.usage, expected, "the receipt counts the upstream's tokens");
  // The key's usage (what its token limits and the usage report read) counts the same tokens.
  const row = await waitUntil(
    () => "the key's usage of the call",
    async () => {
      const [found] = await sequelize.query<{ prompt_tokens: number; completion_tokens: number; total_tokens: number }>(
        'SELECT prompt_tokens::int, completion_tokens::int, total_tokens::int FROM svc_developer_key_usage WHERE credential_id = :id',
        { replacements: { id: key.credential.credential_id }, type: QueryTypes.SELECT },
      );
      // The call's row is written when it is admitted and its tokens when they are settled.
      return found !== undefined && found.total_tokens > 0 && found;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  t.deepEqual({ ...row }, expected);
});
