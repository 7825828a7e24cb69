import test from 'ava';
import { inferenceLimits } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

const post = (path: string, body: unknown, token = svc.operatorToken) =>
  fetch(`${svc.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('route: a request body names its operation by its fields; a description by its words', async (t) => {
  const byBody = await svc.operator.inference.route({ body: { request: { messages: [{ role: 'user', content: 'hi' }] } } });
  t.is(byBody.choice.operation, 'chat');
  t.is(byBody.choice.path, '/v1/chat/completions');
  t.regex(byBody.choice.reason, /messages/);
  const rerank = await svc.operator.inference.route({ body: { request: { query: 'q', documents: ['a'] } } });
  t.is(rerank.choice.operation, 'rerank');
  const byWords = await svc.operator.inference.route({ body: { task: 'summarise this long report into key points' } });
  t.is(byWords.choice.operation, 'summarize');
  t.regex(byWords.choice.reason, /summarise|report/);
  const vectors = await svc.operator.inference.route({ body: { task: 'find near-duplicate texts with vector embeddings' } });
  t.is(vectors.choice.operation, 'embeddings');
  t.is(vectors.choice.model, 'svc-hashed-ngrams-512', 'an operation with an engine names its default model');
  const sentiment = await svc.operator.inference.route({ body: { task: 'detect negative sentiment in customer reviews' } });
  t.is(sentiment.choice.operation, 'classify');
  const pdf = await svc.operator.inference.route({ body: { request: { url: 'https://example.org/a.pdf' } } });
  t.is(pdf.choice.operation, 'pdf_extract');
});

test('route: neither task nor request is a 422', async (t) => {
  const response = await post('/v1/route', {});
  t.is(response.status, 422);
  t.is((await response.json()).code, 'validation_failed');
});

test('discover ranks operations, models and catalog artifacts for a need', async (t) => {
  const answer = await svc.operator.inference.discover({ body: { need: 'embeddings for semantic search and retrieval', limit: 10 } });
  t.true(answer.results.length > 0 && answer.results.length <= 10);
  const kinds = new Set(answer.results.map((result) => result.kind));
  t.true(kinds.has('operation'));
  t.true(kinds.has('artifact'), JSON.stringify(answer.results));
  t.true(answer.results.some((result) => result.kind === 'operation' && result.id === 'embeddings'));
  for (let index = 1; index < answer.results.length; index++) t.true(answer.results[index - 1]!.score >= answer.results[index]!.score);
  const one = await svc.operator.inference.discover({ body: { need: 'summaries', limit: 1 } });
  t.is(one.results.length, 1);
});

test('find_specialist ranks catalog artifacts and served models with reasons; min_score filters', async (t) => {
  const answer = await svc.operator.inference.findSpecialist({ body: { task: 'prompt injection guard for moderation', limit: 5 } });
  t.is(answer.matches[0]?.id, 'prompt-injection-rules');
  t.is(answer.matches[0]?.kind, 'artifact');
  t.true(answer.matches[0]!.reasons.some((reason) => /shared words: .*injection/.test(reason)));
  const strict = await svc.operator.inference.findSpecialist({ body: { task: 'prompt injection guard for moderation', limit: 5, min_score: 0.99 } });
  t.deepEqual(strict.matches, []);
  const models = await svc.operator.inference.findSpecialist({ body: { task: 'hashed n-gram embeddings', limit: 10 } });
  t.true(models.matches.some((match) => match.kind === 'model' && match.id === 'svc-hashed-ngrams-512'));
});

test('a NUL character or a lone surrogate in a description or a request is a 422, never a 500', async (t) => {
  for (const [path, body] of [
    ['/v1/find_specialist', { task: 'nul\u0000inside' }],
    ['/v1/discover', { need: 'nul\u0000inside' }],
    ['/v1/request_specialist', { capability: 'nul\u0000inside', task: 'rerank', use_case: 'x', min_score: 1 }],
    ['/v1/rag', { question: 'q', sources: { artifact_ids: ['nul\u0000inside'] } }],
  ] as const) {
    const response = await post(path, body);
    t.is(response.status, 422, path);
    t.regex((await response.json()).error, /NUL/, path);
  }
  const lone = await post('/v1/request_specialist', { capability: 'lone \ud800 surrogate', task: 'rerank', use_case: 'x', min_score: 1 });
  t.is(lone.status, 422);
  t.regex((await lone.json()).error, /surrogate/);
});

test('describe limits at their edge: the longest description passes, one more character is a 422', async (t) => {
  const longest = 'x'.repeat(inferenceLimits.describeMaxChars);
  t.is((await post('/v1/find_specialist', { task: longest })).status, 200);
  const over = await post('/v1/find_specialist', { task: `${longest}x` });
  t.is(over.status, 422);
  t.regex((await over.json()).error, new RegExp(String(inferenceLimits.describeMaxChars)));
  t.is((await post('/v1/discover', { need: 'x', limit: inferenceLimits.describeMaxResults })).status, 200);
  t.is((await post('/v1/discover', { need: 'x', limit: inferenceLimits.describeMaxResults + 1 })).status, 422);
});

test('eval: exact match, token F1, ROUGE-L, BLEU and accuracy against hand-computed values', async (t) => {
  const answer = await svc.operator.inference.eval({
    body: {
      predictions: ['The cat sat on the mat.', 'a dog', 'positive'],
      references: ['the cat sat on the mat', 'the black dog barked', 'Positive'],
      metrics: ['exact_match', 'token_f1', 'rouge_l', 'bleu', 'accuracy'],
    },
  });
  t.deepEqual(
    answer.items.map((item) => item.scores.exact_match),
    [1, 0, 1],
  );
  // "dog" against "black dog barked": precision 1, recall 1/3, F1 0.5 (articles dropped).
  t.is(answer.items[1]!.scores.token_f1, 0.5);
  // ROUGE-L keeps articles: "a dog" vs "the black dog barked": LCS 1, P 1/2, R 1/4, F 1/3.
  t.true(Math.abs(answer.items[1]!.scores.rouge_l! - 1 / 3) < 1e-9);
  t.is(answer.items[0]!.scores.bleu, 1);
  t.deepEqual(
    answer.items.map((item) => item.scores.accuracy),
    [0, 0, 1],
  );
  t.true(Math.abs(answer.metrics.exact_match! - 2 / 3) < 1e-9);
  t.true(answer.metrics.bleu! > 0 && answer.metrics.bleu! < 1);
  t.is(answer.model, null);
  t.is(answer.usage.units, 3);
});

test('eval: predictions and references must be as many; exactly one of predictions and run', async (t) => {
  const uneven = await post('/v1/eval', { predictions: ['a'], references: ['a', 'b'] });
  t.is(uneven.status, 422);
  t.regex((await uneven.json()).error, /as many/);
  t.is((await post('/v1/eval', { references: ['a'] })).status, 422);
});

test('eval can run a classifier first; a run that cannot classify its inputs is a 422, never a 500', async (t) => {
  const run = await svc.operator.inference.eval({
    body: {
      references: ['positive', 'negative'],
      run: { operation: 'classify', task: 'sentiment', inputs: ['I love it, works great', 'awful and broken'] },
      metrics: ['accuracy'],
    },
  });
  t.is(run.metrics.accuracy, 1);
  t.is(run.model, 'svc-lexical-classifier');
  const nli = await post('/v1/eval', { references: ['a'], run: { operation: 'classify', task: 'nli', inputs: ['x'] } });
  t.is(nli.status, 422);
  t.deepEqual((await nli.json()).detail[0].loc, ['body', 'run', 'task']);
  const unlabelled = await post('/v1/eval', { references: ['a'], run: { operation: 'classify', inputs: ['x'] } });
  t.is(unlabelled.status, 422);
});

test('eval: at most the item limit; one more is a 422', async (t) => {
  const items = Array.from({ length: inferenceLimits.evalMaxItems }, (_, index) => `item ${index}`);
  t.is((await post('/v1/eval', { predictions: items, references: items })).status, 200);
  const over = [...items, 'one more'];
  t.is((await post('/v1/eval', { predictions: over, references: over })).status, 422);
});

test('embeddings through the built-in engine: float and base64 agree; dimensions shorten and renormalise', async (t) => {
  const float = await svc.operator.inference.embeddings({ body: { input: ['retrieval test', 'another text'] } });
  t.is(float.data.length, 2);
  t.is(float.model, 'svc-hashed-ngrams-512');
  const vector = float.data[0]!.embedding as number[];
  t.is(vector.length, 512);
  const base64 = await svc.operator.inference.embeddings({ body: { input: 'retrieval test', encoding_format: 'base64' } });
  const bytes = Buffer.from(base64.data[0]!.embedding as string, 'base64');
  const decoded = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  t.deepEqual(Array.from(decoded), vector);
  const short = await svc.operator.inference.embeddings({ body: { input: 'retrieval test', dimensions: 64 } });
  const shortVector = short.data[0]!.embedding as number[];
  t.is(shortVector.length, 64);
  t.true(Math.abs(Math.hypot(...shortVector) - 1) < 1e-5);
  const tooMany = await post('/v1/embeddings', { input: 'x', dimensions: 513 });
  t.is(tooMany.status, 422);
  t.regex((await tooMany.json()).error, /512/);
  t.true(float.usage.prompt_tokens > 0);
  t.deepEqual(float.svc, { engine: 'builtin', model: 'svc-hashed-ngrams-512', method: 'classical' });
});

test('an unknown model is a 422 listing the models that serve the operation', async (t) => {
  const response = await post('/v1/embeddings', { input: 'x', model: 'no-such-model' });
  t.is(response.status, 422);
  const body = await response.json();
  t.is(body.code, 'model_not_found');
  t.regex(body.error, /svc-hashed-ngrams-512/);
});

test('/v1/models shows every engine and model with its method and defaults', async (t) => {
  const models = await svc.operator.models.list();
  t.true(models.engines.some((engine) => engine.id === 'builtin' && engine.available));
  const hashed = models.data.find((model) => model.id === 'svc-hashed-ngrams-512');
  t.is(hashed?.method, 'classical');
  t.true(hashed?.default_for?.includes('embeddings'));
});

test('inference calls are counted per operation and model in /v1/metrics', async (t) => {
  await svc.operator.inference.embeddings({ body: { input: 'count me' } });
  const metrics = await svc.operator.system.metrics();
  t.regex(metrics, /svc_inference_calls_total\{operation="embeddings",model="svc-hashed-ngrams-512",engine="builtin",outcome="ok"\} [1-9]/);
  t.regex(metrics, /svc_inference_tokens_total\{operation="embeddings",model="svc-hashed-ngrams-512",engine="builtin"\} [1-9]/);
});

test('speed-test times the fixed workload on each engine and is limited per caller', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['inference:invoke']);
  const caller = svc.client({ token: key.secret });
  const first = await caller.inference.speedTest();
  t.regex(first.workload, /fixed/);
  const builtin = first.results.find((result) => result.engine === 'builtin');
  t.true(builtin?.ok);
  t.is(builtin?.items, 64);
  t.true(builtin!.items_per_second > 0);
  for (let call = 2; call <= 6; call++) await caller.inference.speedTest();
  const seventh = await post('/v1/speed-test', undefined, key.secret);
  t.is(seventh.status, 429);
  t.is((await seventh.json()).code, 'rate_limited');
  t.truthy(seventh.headers.get('retry-after'));
  // Another caller has its own allowance.
  t.is((await post('/v1/speed-test', undefined)).status, 200);
});

test('a key without inference:invoke is refused with 403', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['models:read']);
  const response = await post('/v1/route', { task: 'x' }, key.secret);
  t.is(response.status, 403);
});

test('request_specialist answers the matches, and files a feature request (once) when none is good enough', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['inference:invoke', 'requests:read']);
  const caller = svc.client({ token: key.secret });
  const need = { capability: 'a reranker for German legal text', task: 'rerank', use_case: 'ranking court decisions for a legal search agent' };
  const found = await caller.inference.requestSpecialist({ body: { ...need, min_score: 0 } });
  t.true(found.good_enough);
  t.is(found.filed, null);
  t.true(found.matches.length > 0);
  const filed = await caller.inference.requestSpecialist({ body: { ...need, min_score: 1 } });
  t.false(filed.good_enough);
  t.truthy(filed.filed);
  t.regex(filed.filed!.request.request_id, /^brr_[A-Za-z0-9_-]{16,64}$/);
  t.is(filed.filed!.request.kind, 'feature');
  t.false(filed.filed!.replayed);
  const again = await caller.inference.requestSpecialist({ body: { ...need, min_score: 1 } });
  t.true(again.filed!.replayed);
  t.is(again.filed!.request.request_id, filed.filed!.request.request_id);
  const status = await caller.requests.receipt({ params: { request_id: filed.filed!.request.request_id } });
  t.is(status.request_id, filed.filed!.request.request_id);
  const stranger = await signInAgent(svc);
  const strangerKey = await createKey(stranger.client, ['requests:read']);
  const response = await fetch(`${svc.baseUrl}/v1/request-status/${filed.filed!.request.request_id}`, {
    headers: { authorization: `Bearer ${strangerKey.secret}` },
  });
  t.is(response.status, 404);
  const secretShaped = await post(
    '/v1/request_specialist',
    { ...need, use_case: 'my key is sk-live-0123456789abcdefghijklmnopqrstuv', min_score: 1 },
    key.secret,
  );
  t.is(secretShaped.status, 422, 'a credential-shaped text is refused by the request screening, never stored');
});
