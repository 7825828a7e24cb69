import test from 'ava';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { CACHE_OPT_IN_HEADER, CACHE_STATUS_HEADER, RESPONSE_CACHE_NAME, type CacheResponse } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

/**
 * The response cache over a fake OpenAI-compatible upstream that records every call it gets:
 * hits are the stored bytes and never reach the upstream; entries belong to one principal; chat
 * and Responses are cached only when asked; a hit on the credit route costs its credit.
 * Serial: the cache's counters (GET /v1/cache) are the server's, shared by every test here.
 */
let harness: UpstreamHarness;

test.before(async () => {
  harness = await startUpstreamHarness({
    modelList: 'answer-a',
    env: { SVC_OPEN_ACCESS: 'true' },
    modelsFile: {
      upstreams: [],
      models: [
        { id: 'team-embed', upstream: 'upstream', upstream_model: 'embed-x', capabilities: ['embeddings'], dimensions: 4 },
        { id: 'team-rerank', upstream: 'upstream', upstream_model: 'rerank-x', capabilities: ['rerank'] },
      ],
    },
  });
});
test.after.always(async () => {
  await harness?.close();
});

/** A POST as the operator, or with `token` (null: no credential at all), and extra headers. */
function post(route: string, body: unknown, options: { token?: string | null; headers?: Record<string, string> } = {}) {
  const token = options.token === undefined ? harness.svc.operatorToken : options.token;
  return fetch(`${harness.svc.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers },
    body: JSON.stringify(body),
  });
}

/** Calls the upstream got whose JSON body says `field` = `value` (an input text, a query). */
const upstreamCalls = (field: string, value: unknown) =>
  harness.fake.requests.filter((request) => JSON.stringify(request.body[field]) === JSON.stringify(value)).length;

async function responseCacheReport() {
  const response = await fetch(`${harness.svc.baseUrl}/v1/cache`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } });
  const body = (await response.json()) as CacheResponse;
  return body.caches.find((cache) => cache.name === RESPONSE_CACHE_NAME)!;
}

test.serial('a repeated embeddings call is a hit: the same bytes, not sent upstream, counted as a hit with no tokens', async (t) => {
  const before = await responseCacheReport();
  const body = { model: 'team-embed', input: ['cache me once', 'and me too'] };
  const first = await post('/v1/embeddings', body);
  const firstText = await first.text();
  t.is(first.status, 200, firstText);
  t.is(first.headers.get(CACHE_STATUS_HEADER), 'miss');
  const second = await post('/v1/embeddings', { input: ['cache me once', 'and me too'], model: 'team-embed', encoding_format: 'float' });
  t.is(second.headers.get(CACHE_STATUS_HEADER), 'hit', 'the same request: keys in another order, the default encoding spelled out');
  t.is(await second.text(), firstText, 'byte for byte');
  t.is(upstreamCalls('input', body.input), 1, 'the upstream was called once');
  const usage = harness.usage.filter((event) => event.operation === 'embeddings' && event.model === 'team-embed').at(-1)!;
  t.like(usage, { cache: 'hit', ok: true, usage: { prompt_tokens: 0, total_tokens: 0 } });
  const report = await responseCacheReport();
  t.is(report.hits - before.hits, 1);
  t.is(report.misses - before.misses, 1);
  t.is(report.entries - before.entries, 1);
  t.is(report.bytes! - before.bytes!, Buffer.byteLength(firstText), 'bytes are the stored answers');
  t.is(report.ttl_seconds, 3600);
  t.true(report.shared);
  t.is(report.hit_rate, report.hits / (report.hits + report.misses));
});

test.serial("another principal's identical request is a miss, and so is the open principal's, every time", async (t) => {
  const body = { model: 'team-embed', input: 'a private sentence of the operator' };
  t.is((await post('/v1/embeddings', body)).headers.get(CACHE_STATUS_HEADER), 'miss');
  t.is((await post('/v1/embeddings', body)).headers.get(CACHE_STATUS_HEADER), 'hit');
  const agent = await signInAgent(harness.svc);
  const key = await createKey(agent.client, ['inference:invoke']);
  const probe = await post('/v1/embeddings', body, { token: key.secret });
  t.is(probe.status, 200);
  t.is(probe.headers.get(CACHE_STATUS_HEADER), 'miss', "the agent cannot see the operator's entry");
  t.is(upstreamCalls('input', [body.input]), 2, 'svc sends a single input as a list of one');
  t.is((await post('/v1/embeddings', body, { token: key.secret })).headers.get(CACHE_STATUS_HEADER), 'hit', 'its own entry serves it');
  // Open access is one principal for every anonymous caller: nothing of theirs is stored or served.
  for (let call = 0; call < 2; call++) {
    const open = await post('/v1/embeddings', body, { token: null });
    t.is(open.status, 200);
    t.is(open.headers.get(CACHE_STATUS_HEADER), null);
  }
  t.is(upstreamCalls('input', [body.input]), 4);
});

test.serial('rerank is cached; the built-in engine never is', async (t) => {
  const body = { model: 'team-rerank', query: 'which is cached', documents: ['one document', 'another document'] };
  const first = await post('/v1/rerank', body);
  const second = await post('/v1/rerank', body);
  t.deepEqual([first.headers.get(CACHE_STATUS_HEADER), second.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
  t.is(await second.text(), await first.text());
  t.is(upstreamCalls('query', body.query), 1);
  const builtin = await post('/v1/embeddings', { model: 'svc-hashed-ngrams-512', input: 'built in' });
  t.is(builtin.status, 200);
  t.is(builtin.headers.get(CACHE_STATUS_HEADER), null);
});

const chatBody = (question: string, extra: Record<string, unknown> = {}) => ({ model: 'answer-a', messages: [{ role: 'user', content: question }], ...extra });
const optIn = { [CACHE_OPT_IN_HEADER]: 'true' };

test.serial('chat is cached only at temperature 0, not streamed, with the opt-in header', async (t) => {
  const question = 'Is chat cached at temperature zero?';
  const messages = chatBody(question).messages;
  const first = await post('/v1/chat/completions', chatBody(question, { temperature: 0 }), { headers: optIn });
  const firstText = await first.text();
  const second = await post('/v1/chat/completions', chatBody(question, { temperature: 0 }), { headers: optIn });
  t.deepEqual([first.headers.get(CACHE_STATUS_HEADER), second.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
  t.is(await second.text(), firstText, 'the same id, created time and usage: the stored answer');
  t.is(upstreamCalls('messages', messages), 1);
  const uncached = [
    await post('/v1/chat/completions', chatBody(question, { temperature: 0 })),
    await post('/v1/chat/completions', chatBody(question, { temperature: 0.2 }), { headers: optIn }),
    await post('/v1/chat/completions', chatBody(question), { headers: optIn }),
    await post('/v1/chat/completions', chatBody(question, { temperature: 0, stream: true }), { headers: optIn }),
    await post('/v1/chat/completions', chatBody(question, { temperature: 0 }), { headers: { [CACHE_OPT_IN_HEADER]: 'false' } }),
  ];
  for (const response of uncached) {
    t.is(response.status, 200);
    t.is(response.headers.get(CACHE_STATUS_HEADER), null);
    await response.arrayBuffer();
  }
  t.is(upstreamCalls('messages', messages), 1 + uncached.length, 'each went upstream');
  const bad = await post('/v1/chat/completions', chatBody(question, { temperature: 0 }), { headers: { [CACHE_OPT_IN_HEADER]: 'yes' } });
  t.is(bad.status, 422, 'an opt-in header that is neither true nor false is refused, not read as no');
});

test.serial('a Responses call at temperature 0 with the opt-in is a hit the second time, its id included', async (t) => {
  const body = { model: 'answer-a', input: 'Are responses cached?', temperature: 0 };
  const first = await post('/v1/responses', body, { headers: optIn });
  const firstText = await first.text();
  t.is(first.status, 200, firstText);
  const second = await post('/v1/responses', body, { headers: optIn });
  t.deepEqual([first.headers.get(CACHE_STATUS_HEADER), second.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
  t.is(await second.text(), firstText);
  const sent = harness.fake.requests.filter((request) => JSON.stringify(request.body).includes('Are responses cached?'));
  t.is(sent.length, 1);
});

test.serial('on the credit route a hit is a successful call and costs its one credit; the upstream is called once', async (t) => {
  const sequelize = harness.svc.server.database.sequelize;
  const agent = await signInAgent(harness.svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agent.id, 2, `cache-test-${agent.id}`));
  const question = 'What does a cached credit call cost?';
  const call = (idempotencyKey: string) =>
    post('/v1/credits/chat/completions', chatBody(question, { temperature: 0 }), {
      token: key.secret,
      headers: { ...optIn, 'idempotency-key': idempotencyKey },
    });
  const first = await call('cache-credit-1');
  const firstText = await first.text();
  t.is(first.status, 200, firstText);
  const second = await call('cache-credit-2');
  t.deepEqual([first.headers.get(CACHE_STATUS_HEADER), second.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
  t.is(await second.text(), firstText);
  t.is(upstreamCalls('messages', chatBody(question).messages), 1);
  const [account] = await sequelize.query<{ spendable: string; reserved: string }>('SELECT spendable, reserved FROM billing_accounts WHERE principal_id = $1', {
    bind: [agent.id],
    type: QueryTypes.SELECT,
  });
  t.deepEqual({ spendable: Number(account!.spendable), reserved: Number(account!.reserved) }, { spendable: 0, reserved: 0 }, 'two calls, two credits');
  const third = await call('cache-credit-3');
  t.is(third.status, 402, 'no credit left: a hit is refused like any call');
});

test.serial('the operator purges the cache, all of it or one model; other principals cannot', async (t) => {
  const embed = { model: 'team-embed', input: 'purge me' };
  const rerank = { model: 'team-rerank', query: 'purge me too', documents: ['a', 'b'] };
  await (await post('/v1/embeddings', embed)).arrayBuffer();
  await (await post('/v1/rerank', rerank)).arrayBuffer();
  const agent = await signInAgent(harness.svc);
  const key = await createKey(agent.client, ['models:read', 'inference:invoke']);
  const refused = await fetch(`${harness.svc.baseUrl}/v1/cache`, { method: 'DELETE', headers: { authorization: `Bearer ${key.secret}` } });
  t.true(refused.status === 401 || refused.status === 403, String(refused.status));
  const asAgent = await fetch(`${harness.svc.baseUrl}/v1/cache`, { method: 'DELETE', headers: { authorization: `Bearer ${agent.session.accessToken}` } });
  t.is(asAgent.status, 403);
  t.is((await post('/v1/embeddings', embed)).headers.get(CACHE_STATUS_HEADER), 'hit', 'a refused purge removed nothing');
  const readable = await fetch(`${harness.svc.baseUrl}/v1/cache`, { headers: { authorization: `Bearer ${key.secret}` } });
  t.is(readable.status, 200, 'models:read reads the report');

  const oneModel = await harness.svc.operator.models.purgeCache({ query: { model: 'team-embed' } });
  t.is(oneModel.name, RESPONSE_CACHE_NAME);
  t.true(oneModel.purged_entries >= 1);
  t.is((await post('/v1/embeddings', embed)).headers.get(CACHE_STATUS_HEADER), 'miss', "the model's entries went");
  t.is((await post('/v1/rerank', rerank)).headers.get(CACHE_STATUS_HEADER), 'hit', "another model's stayed");
  const all = await harness.svc.operator.models.purgeCache({ query: {} });
  t.true(all.purged_entries >= 2);
  t.true(all.purged_bytes > 0);
  t.is((await responseCacheReport()).entries, 0);
  t.is((await post('/v1/rerank', rerank)).headers.get(CACHE_STATUS_HEADER), 'miss');
});

test.serial('the openai client, unchanged, gets the cached answer: the same embeddings, x-svc-cache on the response', async (t) => {
  const openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
  const input = ['through the openai client'];
  const first = await openai.embeddings.create({ model: 'team-embed', input }).withResponse();
  const second = await openai.embeddings.create({ model: 'team-embed', input }).withResponse();
  t.deepEqual([first.response.headers.get(CACHE_STATUS_HEADER), second.response.headers.get(CACHE_STATUS_HEADER)], ['miss', 'hit']);
  t.deepEqual(second.data, first.data);
  t.is(upstreamCalls('input', input), 1);
});

test.serial('any field that changes the answer changes the key: another encoding or size is a miss of its own', async (t) => {
  const input = ['the key covers every field'];
  const statusOf = async (extra: Record<string, unknown>) =>
    (await post('/v1/embeddings', { model: 'team-embed', input, ...extra })).headers.get(CACHE_STATUS_HEADER);
  t.is(await statusOf({ encoding_format: 'float' }), 'miss');
  t.is(await statusOf({ encoding_format: 'base64' }), 'miss', 'base64 answers other bytes');
  t.is(await statusOf({ dimensions: 2 }), 'miss');
  t.deepEqual([await statusOf({}), await statusOf({ encoding_format: 'base64' }), await statusOf({ dimensions: 2 })], ['hit', 'hit', 'hit']);
  t.is(upstreamCalls('input', input), 3);
});
