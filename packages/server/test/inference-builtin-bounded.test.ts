import test from 'ava';
import { inferenceLimits as limits } from '@svc/schemas';
import { measureLoopHold } from './helpers/loop-hold.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The built-in engine at the contract's largest bodies. Its work is linear (TextRank's graph is
 * capped at 600 sentences), but at these sizes it is seconds: it now runs in slices between turns
 * of the event loop. RAG also scored every passage against every question term (300,000 one-word
 * passages against a 4,000-character question: over 10 s) and built a dense 512-bucket vector per
 * passage; both are now linear in the text.
 */
const LOOP_BUDGET_MS = 100;

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
  // The first call of each route compiles its code; the budget is about the caller's input, not that.
  const text = 'Refunds take five days. Shipping is free.';
  for (const [path, body] of Object.entries({
    '/v1/chat/completions': { model: 'svc-extractive-chat', messages: [{ role: 'user', content: 'refunds?' }] },
    '/v1/rag': { question: 'refunds?', documents: [text] },
    '/v1/summarize': { text },
    '/v1/rerank': { query: 'refunds', documents: [text] },
    '/v1/embeddings': { model: 'svc-hashed-ngrams-512', input: text },
    '/v1/classify': { task: 'sentiment', inputs: [text] },
  })) {
    await fetch(`${svc.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
      body: JSON.stringify(body),
    });
  }
});
test.after.always(async () => {
  await svc?.close();
});

const fill = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
/** Distinct words, about six characters each. */
const distinctWords = (length: number, seed: number) =>
  fill(Array.from({ length: Math.ceil(length / 6) }, (_, index) => `w${(index * 7919 + seed).toString(36)}`).join(' '), length);

/**
 * The route's answer and the longest this process's event loop (server and client) was held
 * meanwhile. The body is encoded before the watch begins: that is the test's work, not the server's.
 */
async function postWatchingLoop(path: string, body: unknown) {
  const encoded = JSON.stringify(body);
  const { result, heldMs } = await measureLoopHold(async () => {
    const response = await fetch(`${svc.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
      body: encoded,
    });
    return { status: response.status, answer: await response.json() };
  });
  return { ...result, worstDelayMs: heldMs };
}

test.serial('rag: 1,000,000 characters of one-word paragraphs against a 4,000-character question', async (t) => {
  const question = `How many days do refunds take? ${distinctWords(limits.ragMaxQuestionChars - 40, 1)}`.slice(0, limits.ragMaxQuestionChars);
  const answerDocument = 'Refunds take five days.';
  const paragraphs = Array.from({ length: 4 }, () => fill('x\n\n', limits.ragMaxDocumentChars));
  const last = fill('x\n\n', limits.ragMaxTotalChars - 4 * limits.ragMaxDocumentChars - answerDocument.length - 2);
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/rag', {
    question,
    documents: [...paragraphs, `${last}\n\n${answerDocument}`],
    top_k: limits.ragMaxTopK,
  });
  t.is(status, 200);
  // Hundreds of question words the documents lack keep it below answerable; the passage that holds the rest comes first.
  t.is(answer.passages[0].text, answerDocument);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('summarize: 400,000 characters, TextRank over its first 600 sentences', async (t) => {
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/summarize', {
    text: fill('Refunds take five days. Shipping is free. ', limits.summarizeMaxChars),
    max_sentences: limits.summarizeMaxSentences,
  });
  t.is(status, 200);
  t.is(answer.sentences.length, limits.summarizeMaxSentences);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('summarize: one 400,000-character sentence is the summary', async (t) => {
  const text = distinctWords(limits.summarizeMaxChars, 2);
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/summarize', { text, max_sentences: 3 });
  t.is(status, 200);
  t.is(answer.summary, text.trim());
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('summarize: 400,000 characters of `<a` and of accented words count their tokens in steps, as the whole text would', async (t) => {
  // Combining accents, a ligature NFKC splits and digits next to the chunk cuts: none may change the count.
  const text = fill('<a', limits.summarizeMaxChars / 2) + fill('cafe\u0301 \uFB01ne 42x <b>Zq9</b> ', limits.summarizeMaxChars / 2);
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/summarize', { text, max_sentences: 3 });
  t.is(status, 200);
  const words = (one: string) =>
    one
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
  t.is(answer.usage.prompt_tokens, words(text));
  t.is(answer.usage.completion_tokens, words(answer.summary));
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

const fullBody = (bodyBytes: number, itemChars: number, most: number) => Math.min(most, Math.floor((bodyBytes - itemChars - 1024) / (itemChars + 3)));

test.serial('rerank: a 4 MiB body of 32,768-character documents ranks the one that holds the query first', async (t) => {
  const count = fullBody(limits.rerankBodyBytes, limits.rerankMaxDocumentChars, limits.rerankMaxDocuments);
  const documents = Array.from({ length: count }, (_, index) => distinctWords(limits.rerankMaxDocumentChars, index + 10));
  documents[count - 3] = `refund policy ${documents[count - 3]!}`.slice(0, limits.rerankMaxDocumentChars);
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/rerank', {
    query: `refund policy ${distinctWords(limits.rerankMaxDocumentChars - 20, 99999)}`.slice(0, limits.rerankMaxDocumentChars),
    documents,
    top_n: 1,
  });
  t.is(status, 200);
  t.is(answer.results[0].index, count - 3);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('embeddings: a 4 MiB body of 32,768-character inputs, each vector as for the input alone', async (t) => {
  const count = fullBody(limits.embeddingsBodyBytes, limits.embeddingsMaxInputChars, limits.embeddingsMaxInputs);
  const input = Array.from({ length: count }, (_, index) => distinctWords(limits.embeddingsMaxInputChars, index));
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/embeddings', { model: 'svc-hashed-ngrams-512', input });
  t.is(status, 200);
  t.is(answer.data.length, count);
  const alone = await postWatchingLoop('/v1/embeddings', { model: 'svc-hashed-ngrams-512', input: input[count - 1] });
  t.deepEqual(answer.data[count - 1].embedding, alone.answer.data[0].embedding);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('classify: a 2 MiB body of 32,768-character texts', async (t) => {
  const count = fullBody(limits.classifyBodyBytes, limits.classifyMaxTextChars, limits.classifyMaxTexts);
  const inputs = Array.from({ length: count }, (_, index) => distinctWords(limits.classifyMaxTextChars, index));
  inputs[0] = fill('This is wonderful, I love it. ', limits.classifyMaxTextChars);
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/classify', { task: 'sentiment', inputs });
  t.is(status, 200);
  t.is(answer.results.length, count);
  t.is(answer.results[0].label, 'positive');
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('chat (svc-extractive-chat): a 1 MiB conversation is searched without holding the loop', async (t) => {
  const messages = [
    { role: 'system', content: `Refunds take five days. ${distinctWords(limits.chatMaxMessageChars - 30, 1)}` },
    ...[2, 3, 4].map((seed) => ({ role: 'user', content: distinctWords(limits.chatMaxMessageChars, seed) })),
    { role: 'user', content: `How many days do refunds take? ${distinctWords(limits.chatMaxMessageChars / 2, 5)}` },
  ];
  const { status, answer, worstDelayMs } = await postWatchingLoop('/v1/chat/completions', { model: 'svc-extractive-chat', messages });
  t.is(status, 200);
  t.true(answer.choices[0].message.content.startsWith('svc-extractive-chat is extractive'));
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});
