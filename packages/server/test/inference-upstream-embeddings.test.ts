import test from 'ava';
import OpenAI from 'openai';
import { inferenceLimits as limits } from '@svc/schemas';
import { fakeVector } from '@svc/testing/fake-openai-upstream';
import { postJson, startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({
    modelList: 'answer-a',
    modelsFile: {
      upstreams: [{ id: 'tei', base_url: '{fake}/v1', rerank_api: 'tei' }],
      models: [
        { id: 'team-embed', upstream: 'upstream', upstream_model: 'embed-x', capabilities: ['embeddings'], dimensions: 4 },
        { id: 'team-rerank', upstream: 'upstream', upstream_model: 'rerank-x', capabilities: ['rerank'] },
        { id: 'tei-rerank', upstream: 'tei', upstream_model: 'bge-reranker', capabilities: ['rerank'] },
      ],
    },
  });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

const texts = ['the first text', 'a second, longer text to embed'];

test("the openai client embeds through the upstream, base64 (its default) and float, with the upstream's numbers", async (t) => {
  const base64 = await openai.embeddings.create({ model: 'team-embed', input: texts });
  const float = await openai.embeddings.create({ model: 'team-embed', input: texts, encoding_format: 'float' });
  for (const answer of [base64, float]) {
    t.is(answer.model, 'team-embed');
    t.is(answer.data.length, 2);
    answer.data.forEach((item, index) => t.deepEqual(item.embedding, fakeVector(texts[index]!).map(Math.fround), 'float32 on the wire, same numbers'));
    t.is(answer.usage.prompt_tokens, 9);
  }
  const sent = harness.fake.requests.filter((request) => request.body.model === 'embed-x');
  t.true(
    sent.every((request) => request.body.encoding_format === 'float'),
    'svc asks the upstream for floats and encodes itself',
  );
  const raw = (await (await postJson(harness.svc, '/v1/embeddings', { model: 'team-embed', input: 'x', encoding_format: 'base64' })).json()) as {
    data: Array<{ embedding: string }>;
  };
  t.is(typeof raw.data[0]!.embedding, 'string');
  t.is(Buffer.from(raw.data[0]!.embedding, 'base64').byteLength, 16, 'four little-endian float32');
});

test('the openai client embeds with the built-in engine, base64 and float, when the request names no model', async (t) => {
  const base64 = await openai.embeddings.create({ model: undefined as unknown as string, input: texts });
  const float = await openai.embeddings.create({ model: 'svc-hashed-ngrams-512', input: texts, encoding_format: 'float' });
  t.is(base64.model, 'svc-hashed-ngrams-512');
  t.is(base64.data[0]!.embedding.length, 512);
  base64.data.forEach((item, index) => {
    const norm = Math.hypot(...item.embedding);
    t.true(Math.abs(norm - 1) < 1e-5, 'unit vectors');
    t.deepEqual(item.embedding, float.data[index]!.embedding.map(Math.fround));
  });
  const short = await openai.embeddings.create({ model: 'svc-hashed-ngrams-512', input: 'short', dimensions: 64 });
  t.is(short.data[0]!.embedding.length, 64);
});

test("dimensions pass to the upstream within the model's size; past it, a 422", async (t) => {
  await openai.embeddings.create({ model: 'team-embed', input: 'x', dimensions: 4 });
  t.true(harness.fake.requests.some((request) => request.body.model === 'embed-x' && request.body.dimensions === 4));
  const response = await postJson(harness.svc, '/v1/embeddings', { model: 'team-embed', input: 'x', dimensions: 5 });
  t.is(response.status, 422);
});

test('an upstream chat model asked for embeddings: a 422 that says how to declare the capability', async (t) => {
  const response = await postJson(harness.svc, '/v1/embeddings', { model: 'answer-a', input: 'x' });
  t.is(response.status, 422);
  const body = (await response.json()) as { code: string; error: string };
  t.is(body.code, 'model_operation_unsupported');
  t.true(body.error.startsWith('Model "answer-a" cannot serve embeddings. Models for embeddings: '), body.error);
  t.true(body.error.includes('team-embed'), 'lists the models that do');
  t.true(
    body.error.includes(
      'declare it: "answer-a=chat+embeddings" in SVC_UPSTREAM_MODELS, or "capabilities": ["chat","embeddings"] on its entry in the models file (SVC_MODELS_FILE).',
    ),
    body.error,
  );
});

test('rerank through a Cohere-shaped upstream: best first, top_n, documents returned by svc', async (t) => {
  const response = await postJson(harness.svc, '/v1/rerank', {
    model: 'team-rerank',
    query: 'red apple',
    documents: ['a blue car', 'red apple pie', { text: 'an apple' }],
    top_n: 2,
    return_documents: true,
  });
  t.is(response.status, 200);
  const body = (await response.json()) as {
    results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
    model: string;
    usage: { units?: number };
  };
  t.is(body.model, 'team-rerank');
  t.deepEqual(
    body.results.map((result) => result.index),
    [1, 2],
  );
  t.is(body.results[0]!.document?.text, 'red apple pie');
  t.is(body.usage.units, 3);
  const sent = harness.fake.requests.find((request) => request.path === '/v1/rerank')!;
  t.deepEqual(sent.body, { model: 'rerank-x', query: 'red apple', documents: ['a blue car', 'red apple pie', 'an apple'], top_n: 2, return_documents: false });
});

test("rerank through TEI's native /rerank: { query, texts } in, [{ index, score }] adapted", async (t) => {
  const response = await postJson(harness.svc, '/v1/rerank', {
    model: 'tei-rerank',
    query: 'red apple',
    documents: ['a blue car', 'red apple pie', 'an apple'],
    top_n: 2,
  });
  t.is(response.status, 200);
  const body = (await response.json()) as { results: Array<{ index: number; relevance_score: number; document?: unknown }> };
  t.deepEqual(
    body.results.map((result) => result.index),
    [1, 2],
  );
  t.true(body.results[0]!.relevance_score >= body.results[1]!.relevance_score);
  t.is(body.results[0]!.document, undefined);
  const sent = harness.fake.requests.find((request) => request.path === '/rerank')!;
  t.deepEqual(sent.body.texts, ['a blue car', 'red apple pie', 'an apple']);
  t.is(sent.body.query, 'red apple');
});

/** A JSON body of exactly `bytes` bytes, padded with ASCII spread over the strings `make` places. */
function bodyOfBytes(bytes: number, make: (padding: number) => unknown): string {
  const base = JSON.stringify(make(0)).length;
  const body = JSON.stringify(make(bytes - base));
  if (Buffer.byteLength(body) !== bytes) throw new Error(`padding missed: ${Buffer.byteLength(body)} != ${bytes}`);
  return body;
}

function postRaw(route: string, body: string): Promise<Response> {
  return fetch(`${harness.svc.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.svc.operatorToken}` },
    body,
  });
}

/** Six messages share the padding, each within its character limit. */
const chatOfBytes = (bytes: number) =>
  bodyOfBytes(bytes, (padding) => ({
    model: 'answer-a',
    messages: Array.from({ length: 6 }, (_, index) => ({ role: 'user', content: 'x'.repeat(Math.floor(padding / 6) + (index < padding % 6 ? 1 : 0)) })),
  }));

test('chat body limits at their edges: bytes, messages, characters a message', async (t) => {
  t.is((await postRaw('/v1/chat/completions', chatOfBytes(limits.chatBodyBytes))).status, 200, 'a body of exactly the limit passes');
  const over = await postRaw('/v1/chat/completions', chatOfBytes(limits.chatBodyBytes + 1));
  t.is(over.status, 413);
  t.regex(((await over.json()) as { error: string }).error, new RegExp(String(limits.chatBodyBytes)));

  const messages = (count: number) => Array.from({ length: count }, () => ({ role: 'user', content: 'hi' }));
  t.is((await postJson(harness.svc, '/v1/chat/completions', { model: 'answer-a', messages: messages(limits.chatMaxMessages) })).status, 200);
  const tooMany = await postJson(harness.svc, '/v1/chat/completions', { model: 'answer-a', messages: messages(limits.chatMaxMessages + 1) });
  t.is(tooMany.status, 422);
  t.regex(JSON.stringify(await tooMany.json()), new RegExp(`at most ${limits.chatMaxMessages} messages`));

  const long = (chars: number) => ({ model: 'answer-a', messages: [{ role: 'user', content: 'y'.repeat(chars) }] });
  t.is((await postJson(harness.svc, '/v1/chat/completions', long(limits.chatMaxMessageChars))).status, 200);
  const tooLong = await postJson(harness.svc, '/v1/chat/completions', long(limits.chatMaxMessageChars + 1));
  t.is(tooLong.status, 422);
  t.regex(JSON.stringify(await tooLong.json()), new RegExp(String(limits.chatMaxMessageChars)));
});

/** As many inputs as needed, each within its character limit, share the padding. */
const embeddingsOfBytes = (bytes: number) => {
  const count = Math.ceil(bytes / limits.embeddingsMaxInputChars) + 1;
  return bodyOfBytes(bytes, (padding) => ({
    model: 'team-embed',
    input: Array.from({ length: count }, (_, index) => 'z'.repeat(Math.floor(padding / count) + (index < padding % count ? 1 : 0))),
  }));
};

test('embeddings body limits at their edges: bytes, inputs, characters an input', async (t) => {
  t.is((await postRaw('/v1/embeddings', embeddingsOfBytes(limits.embeddingsBodyBytes))).status, 200, 'a body of exactly the limit passes');
  t.is((await postRaw('/v1/embeddings', embeddingsOfBytes(limits.embeddingsBodyBytes + 1))).status, 413);

  const inputs = (count: number) => ({ model: 'team-embed', input: Array.from({ length: count }, () => 'word') });
  t.is((await postJson(harness.svc, '/v1/embeddings', inputs(limits.embeddingsMaxInputs))).status, 200);
  const tooMany = await postJson(harness.svc, '/v1/embeddings', inputs(limits.embeddingsMaxInputs + 1));
  t.is(tooMany.status, 422);
  t.regex(JSON.stringify(await tooMany.json()), new RegExp(`at most ${limits.embeddingsMaxInputs} inputs`));

  const long = (chars: number) => ({ model: 'team-embed', input: 'q'.repeat(chars) });
  t.is((await postJson(harness.svc, '/v1/embeddings', long(limits.embeddingsMaxInputChars))).status, 200);
  const tooLong = await postJson(harness.svc, '/v1/embeddings', long(limits.embeddingsMaxInputChars + 1));
  t.is(tooLong.status, 422);
  t.regex(JSON.stringify(await tooLong.json()), new RegExp(String(limits.embeddingsMaxInputChars)));
});
