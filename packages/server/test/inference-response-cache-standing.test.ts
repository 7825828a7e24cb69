import test from 'ava';
import OpenAI from 'openai';
import { CACHE_OPT_IN_HEADER, CACHE_STATUS_HEADER, RESPONSE_CACHE_NAME, type CacheResponse } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

/**
 * What a response-cache hit may stand for: only the answer of the model the request named (never
 * a fallback's, which the next identical call would get again as a "hit" for an hour), and never a
 * stored response, or a continuation of one, that has since been deleted. Serial: the cases
 * count the fake upstream's calls.
 */
let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({
    modelList: 'answer-a',
    modelsFile: {
      upstreams: [],
      models: [{ id: 'flaky-chat', upstream: 'upstream', upstream_model: 'broken-primary', capabilities: ['chat'], fallbacks: ['svc-extractive-chat'] }],
    },
  });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

const optIn = { headers: { [CACHE_OPT_IN_HEADER]: 'true' } };
const upstreamCallsFor = (model: string) => harness.fake.requests.filter((request) => request.body.model === model).length;

test.serial("a built-in fallback's answer is passed on, not kept under the upstream model's key: the next call asks the upstream again", async (t) => {
  const chat = { model: 'flaky-chat', messages: [{ role: 'user' as const, content: 'How do I post on the blackboard?' }], temperature: 0 };
  const first = await openai.chat.completions.create(chat, optIn).withResponse();
  t.like((first.data as unknown as { svc: unknown }).svc, { engine: 'builtin', model: 'svc-extractive-chat' });
  const second = await openai.chat.completions.create(chat, optIn).withResponse();
  t.deepEqual([first.response.headers.get(CACHE_STATUS_HEADER), second.response.headers.get(CACHE_STATUS_HEADER)], ['miss', 'miss']);
  t.true(upstreamCallsFor('broken-primary') >= 1, 'the upstream was tried first');

  const responses = { model: 'flaky-chat', input: 'How do I read the blackboard?', temperature: 0 };
  const one = await openai.responses.create(responses, optIn).withResponse();
  t.like((one.data as unknown as { svc: unknown }).svc, { engine: 'builtin' });
  const two = await openai.responses.create(responses, optIn).withResponse();
  t.deepEqual([one.response.headers.get(CACHE_STATUS_HEADER), two.response.headers.get(CACHE_STATUS_HEADER)], ['miss', 'miss']);
});

test.serial("the named upstream's own answer is still cached", async (t) => {
  const chat = { model: 'answer-a', messages: [{ role: 'user' as const, content: 'cache me' }], temperature: 0 };
  const first = await openai.chat.completions.create(chat, optIn).withResponse();
  const second = await openai.chat.completions.create(chat, optIn).withResponse();
  t.deepEqual([first.response.headers.get(CACHE_STATUS_HEADER), second.response.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
});

test.serial('a cached continuation of a deleted previous response is a 404, as without the cache', async (t) => {
  const start = await openai.responses.create({ model: 'answer-a', input: 'Start a conversation.' });
  const continuation = { model: 'answer-a', input: 'Go on.', previous_response_id: start.id, temperature: 0 };
  const first = await openai.responses.create(continuation, optIn).withResponse();
  const second = await openai.responses.create(continuation, optIn).withResponse();
  t.deepEqual([first.response.headers.get(CACHE_STATUS_HEADER), second.response.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);

  await openai.responses.delete(start.id);
  const gone = await t.throwsAsync(openai.responses.create(continuation, optIn));
  t.is((gone as InstanceType<typeof OpenAI.APIError>).status, 404);
});

test.serial('a cached answer whose stored response was deleted is computed again, with an id GET finds', async (t) => {
  const body = { model: 'answer-a', input: 'Keep this, then delete it.', temperature: 0 };
  const first = await openai.responses.create(body, optIn).withResponse();
  const hit = await openai.responses.create(body, optIn).withResponse();
  t.is(hit.response.headers.get(CACHE_STATUS_HEADER), 'hit');
  t.is(hit.data.id, first.data.id);

  await openai.responses.delete(first.data.id);
  const again = await openai.responses.create(body, optIn).withResponse();
  t.is(again.response.headers.get(CACHE_STATUS_HEADER), 'miss');
  t.not(again.data.id, first.data.id);
  t.is((await openai.responses.retrieve(again.data.id)).id, again.data.id);
  // And the new answer is the cached one from now on.
  const next = await openai.responses.create(body, optIn).withResponse();
  t.deepEqual([next.response.headers.get(CACHE_STATUS_HEADER), next.data.id], ['hit', again.data.id]);
});

test.serial('GET /v1/cache: the operator sees the server; any other caller only its own share of the response cache', async (t) => {
  const cachedChat = (client: OpenAI, content: string) =>
    client.chat.completions.create({ model: 'answer-a', messages: [{ role: 'user', content }], temperature: 0 }, optIn).withResponse();
  await cachedChat(openai, 'the operator asks');
  const agentA = await signInAgent(harness.svc, 'models:read inference:invoke');
  const keyA = await createKey(agentA.client, ['models:read', 'inference:invoke'], 'a');
  const asA = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: keyA.secret, maxRetries: 0 });
  const statuses = [(await cachedChat(asA, 'agent A asks')).response, (await cachedChat(asA, 'agent A asks')).response].map((response) =>
    response.headers.get(CACHE_STATUS_HEADER),
  );
  t.deepEqual(statuses, ['miss', 'hit']);
  const agentB = await signInAgent(harness.svc, 'models:read');
  const keyB = await createKey(agentB.client, ['models:read'], 'b');

  const report = async (token: string) => {
    const response = await fetch(`${harness.svc.baseUrl}/v1/cache`, { headers: { authorization: `Bearer ${token}` } });
    t.is(response.status, 200);
    return ((await response.json()) as CacheResponse).caches;
  };
  const [ofB] = await report(keyB.secret).then((caches) => {
    t.deepEqual(
      caches.map((cache) => cache.name),
      [RESPONSE_CACHE_NAME],
      'no worker pool or internal cache for a caller that is not the operator',
    );
    return caches;
  });
  t.like(ofB, { view: 'principal', entries: 0, bytes: 0, hits: 0, misses: 0, hit_rate: null });
  const [ofA] = await report(keyA.secret);
  t.like(ofA, { view: 'principal', entries: 1, hits: 1, misses: 1, hit_rate: 0.5 });
  t.true(ofA!.bytes! > 0);
  // Agent A's bearer token is the same principal as its key: the same share.
  t.like((await report(agentA.session.accessToken))[0], { entries: 1 });

  const server = await report(harness.svc.operatorToken);
  t.true(server.some((cache) => cache.name === 'pdf-workers'));
  const whole = server.find((cache) => cache.name === RESPONSE_CACHE_NAME)!;
  t.is(whole.view, 'server');
  t.true(whole.entries >= 2, "the operator's view counts every principal's entries");
  t.true(whole.bytes! > ofA!.bytes!);
});
