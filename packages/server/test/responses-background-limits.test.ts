import test from 'ava';
import OpenAI from 'openai';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * A background response is still its request's work for the key's limits: the concurrency lease
 * (and a token reservation) taken when it was asked for is held until the run ends, not given
 * back with the answer that comes at once. Otherwise a key limited to N requests in flight could
 * start any number of runs in the background.
 */
let fake: FakeUpstream;
let svc: TestServer;

test.before(async () => {
  // 300 ms a chunk: the answer's dozen words take seconds, long enough to be seen in flight.
  fake = await startFakeOpenAiUpstream({ chunkDelayMs: 300 });
  svc = await startTestServer({ env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'answer-a' } });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

test('a background response holds its key concurrency slot until it ends: the next call is refused while it runs, and passes after', async (t) => {
  const agent = await signInAgent(svc);
  const { secret } = await agent.client.credentials.create({
    body: { name: 'one at a time', scopes: ['models:read', 'inference:invoke'], limits: { concurrent_requests: 1 } },
  });
  const openai = new OpenAI({ baseURL: `${svc.baseUrl}/v1`, apiKey: secret, maxRetries: 0 });
  const models = () => fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });

  const created = await openai.responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  t.is(created.status, 'in_progress');
  const refused = await models();
  t.is(refused.status, 429, 'the run still holds the one slot');
  t.is(((await refused.json()) as { code: string }).code, 'key_limit_exceeded:concurrent_requests');

  await waitUntil(
    () => 'the slot to come back when the run ends',
    async () => (await models()).status === 200,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  t.is((await openai.responses.retrieve(created.id)).status, 'completed', 'given back only once the run had ended');
});
