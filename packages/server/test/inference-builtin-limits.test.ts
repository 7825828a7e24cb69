import test, { type ExecutionContext } from 'ava';
import { inferenceLimits as limits } from '@svc/schemas';
import { startInferenceServer, type InferenceServer } from './helpers/inference.ts';

/** Every size limit of the built-in routes at its edge: the limit passes, one past fails naming it. */
let server: InferenceServer;
test.before(async () => {
  server = await startInferenceServer();
});
test.after.always(async () => {
  await server?.svc.close();
});

/** Sentences of distinct words, `chars` long exactly. */
function prose(chars: number): string {
  let text = '';
  for (let index = 0; text.length < chars; index++) text += `Sentence ${index} talks about topic${index % 97} and more. `;
  return text.slice(0, chars);
}

/** A JSON body padded with trailing spaces (still valid JSON) to exactly `bytes` bytes. */
function padded(body: unknown, bytes: number): string {
  const json = JSON.stringify(body);
  if (Buffer.byteLength(json) > bytes) throw new Error('the body is already past the padding size');
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

async function edge(t: ExecutionContext, path: string, atLimit: unknown, pastLimit: unknown, limit: number): Promise<void> {
  const ok = await server.post(path, atLimit);
  t.is(ok.status, 200, `${path} at the limit: ${JSON.stringify(ok.body).slice(0, 300)}`);
  const refused = await server.post(path, pastLimit);
  t.is(refused.status, 422, `${path} one past the limit`);
  t.is(refused.body.code, 'validation_failed');
  t.true(JSON.stringify(refused.body).includes(String(limit)), `the refusal names ${limit}: ${JSON.stringify(refused.body).slice(0, 300)}`);
}

async function byteEdge(t: ExecutionContext, path: string, body: unknown, bytes: number): Promise<void> {
  const ok = await server.post(path, undefined, { rawBody: padded(body, bytes) });
  t.is(ok.status, 200, `${path} body of ${bytes} bytes`);
  const refused = await server.post(path, undefined, { rawBody: padded(body, bytes + 1) });
  t.is(refused.status, 413, `${path} body of ${bytes + 1} bytes`);
  t.is(refused.body.code, 'payload_too_large');
}

test('rerank: documents, characters per document and query, body bytes', async (t) => {
  const many = (count: number) => ({ query: 'topic', documents: Array.from({ length: count }, (_, index) => `document ${index} about topic${index}`) });
  await edge(t, '/v1/rerank', many(limits.rerankMaxDocuments), many(limits.rerankMaxDocuments + 1), limits.rerankMaxDocuments);
  await edge(
    t,
    '/v1/rerank',
    { query: 'topic', documents: [prose(limits.rerankMaxDocumentChars)] },
    { query: 'topic', documents: [{ text: prose(limits.rerankMaxDocumentChars + 1) }] },
    limits.rerankMaxDocumentChars,
  );
  await edge(
    t,
    '/v1/rerank',
    { query: prose(limits.rerankMaxDocumentChars), documents: ['x'] },
    { query: prose(limits.rerankMaxDocumentChars + 1), documents: ['x'] },
    limits.rerankMaxDocumentChars,
  );
  await byteEdge(t, '/v1/rerank', { query: 'topic', documents: ['a topic'] }, limits.rerankBodyBytes);
});

test('classify: texts, pairs, characters per text, labels, body bytes', async (t) => {
  const texts = (count: number) => ({ task: 'sentiment', inputs: Array.from({ length: count }, (_, index) => `text ${index} is good`) });
  await edge(t, '/v1/classify', texts(limits.classifyMaxTexts), texts(limits.classifyMaxTexts + 1), limits.classifyMaxTexts);
  const pairs = (count: number) => ({ task: 'nli', pairs: Array.from({ length: count }, () => ({ premise: 'a cat sleeps', hypothesis: 'a cat' })) });
  await edge(t, '/v1/classify', pairs(limits.classifyMaxTexts), pairs(limits.classifyMaxTexts + 1), limits.classifyMaxTexts);
  await edge(
    t,
    '/v1/classify',
    { task: 'toxicity', inputs: prose(limits.classifyMaxTextChars) },
    { task: 'toxicity', inputs: prose(limits.classifyMaxTextChars + 1) },
    limits.classifyMaxTextChars,
  );
  const labels = (count: number) => ({ task: 'other', inputs: 'x', labels: Array.from({ length: count }, (_, index) => `label ${index}`) });
  await edge(t, '/v1/classify', labels(limits.classifyMaxLabels), labels(limits.classifyMaxLabels + 1), limits.classifyMaxLabels);
  await byteEdge(t, '/v1/classify', { task: 'sentiment', inputs: 'good' }, limits.classifyBodyBytes);
});

test('summarize: characters, max_sentences, body bytes', async (t) => {
  await edge(t, '/v1/summarize', { text: prose(limits.summarizeMaxChars) }, { text: prose(limits.summarizeMaxChars + 1) }, limits.summarizeMaxChars);
  const text = prose(10_000);
  const atLimit = await server.post('/v1/summarize', { text, max_sentences: limits.summarizeMaxSentences });
  t.is(atLimit.body.sentences.length, limits.summarizeMaxSentences);
  await edge(
    t,
    '/v1/summarize',
    { text, max_sentences: limits.summarizeMaxSentences },
    { text, max_sentences: limits.summarizeMaxSentences + 1 },
    limits.summarizeMaxSentences,
  );
  await byteEdge(t, '/v1/summarize', { text: 'One sentence. Another one.' }, limits.summarizeBodyBytes);
});

test('rag: documents, characters per document and in all, top_k, question, body bytes', async (t) => {
  const question = 'topic5';
  const documents = (count: number) => ({ question, documents: Array.from({ length: count }, (_, index) => `doc ${index} about topic${index}.`) });
  await edge(t, '/v1/rag', documents(limits.ragMaxDocuments), documents(limits.ragMaxDocuments + 1), limits.ragMaxDocuments);
  await edge(
    t,
    '/v1/rag',
    { question, documents: [prose(limits.ragMaxDocumentChars)] },
    { question, documents: [{ text: prose(limits.ragMaxDocumentChars + 1) }] },
    limits.ragMaxDocumentChars,
  );
  const share = limits.ragMaxTotalChars / limits.ragMaxDocumentChars;
  // `share` documents at the per-document cap are exactly the total cap; one more character is one past it.
  const full = Array.from({ length: share }, () => prose(limits.ragMaxDocumentChars));
  await edge(t, '/v1/rag', { question, documents: full }, { question, documents: [...full, 'x'] }, limits.ragMaxTotalChars);
  await edge(
    t,
    '/v1/rag',
    { question, documents: ['topic5 here.'], top_k: limits.ragMaxTopK },
    { question, documents: ['topic5 here.'], top_k: limits.ragMaxTopK + 1 },
    limits.ragMaxTopK,
  );
  await edge(
    t,
    '/v1/rag',
    { question: prose(limits.ragMaxQuestionChars), documents: ['x'] },
    { question: prose(limits.ragMaxQuestionChars + 1), documents: ['x'] },
    limits.ragMaxQuestionChars,
  );
  await byteEdge(t, '/v1/rag', { question, documents: ['topic5 here.'] }, limits.ragBodyBytes);
});

test('chat: messages, characters per message, stop sequences, max_tokens, body bytes', async (t) => {
  const messages = (count: number) => ({
    messages: Array.from({ length: count }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `message ${index}` })),
  });
  await edge(t, '/v1/chat/completions', messages(limits.chatMaxMessages), messages(limits.chatMaxMessages + 1), limits.chatMaxMessages);
  await edge(
    t,
    '/v1/chat/completions',
    { messages: [{ role: 'user', content: prose(limits.chatMaxMessageChars) }] },
    { messages: [{ role: 'user', content: prose(limits.chatMaxMessageChars + 1) }] },
    limits.chatMaxMessageChars,
  );
  const stops = (count: number) => ({
    messages: [{ role: 'user', content: 'what is svc' }],
    stop: Array.from({ length: count }, (_, index) => `stop${index}`),
  });
  await edge(t, '/v1/chat/completions', stops(limits.chatMaxStopSequences), stops(limits.chatMaxStopSequences + 1), limits.chatMaxStopSequences);
  const tokens = (count: number) => ({ messages: [{ role: 'user', content: 'what is svc' }], max_tokens: count });
  await edge(t, '/v1/chat/completions', tokens(limits.chatMaxTokens), tokens(limits.chatMaxTokens + 1), limits.chatMaxTokens);
  await byteEdge(t, '/v1/chat/completions', { messages: [{ role: 'user', content: 'what is svc' }] }, limits.chatBodyBytes);
});
