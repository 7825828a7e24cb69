import test from 'ava';
import { inferenceLimits } from '@svc/schemas';
import { measureLoopHold } from './helpers/loop-hold.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * /v1/eval at the contract's sizes (items of 32,768 characters, a 4 MiB body). ROUGE-L was an
 * O(n * m) table on the main thread (two longest items: 5.5 s; a full body: minutes), and BLEU
 * counted n-grams by joined strings (a full body: about 6 s). ROUGE-L is now a bit-parallel LCS,
 * exact, priced before it runs and refused past its budget; the scoring runs in slices.
 */
const LOOP_BUDGET_MS = 100;
const ITEM = inferenceLimits.evalMaxItemChars;
/** Pairs of the longest items a 4 MiB body holds (each item is 32,768 characters plus quotes and a comma). */
const FULL_BODY_PAIRS = Math.floor(inferenceLimits.evalBodyBytes / (2 * (ITEM + 3)));

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
  // The first call compiles the route's code; the budget is about the caller's input, not that.
  await svc.operator.inference.eval({
    body: { predictions: ['warm up'], references: ['warm up'], metrics: ['exact_match', 'token_f1', 'rouge_l', 'bleu', 'accuracy'] },
  });
});
test.after.always(async () => {
  await svc?.close();
});

const longest = (unit: string) => unit.repeat(Math.floor(ITEM / unit.length));
const rougeTokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The textbook O(n * m) table, as the metric was computed before. */
function referenceRougeL(prediction: string, reference: string): number {
  const a = rougeTokens(prediction);
  const b = rougeTokens(reference);
  if (a.length === 0 || b.length === 0) return 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const token of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) current[j] = token === b[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    previous = current;
  }
  const lcs = previous[b.length]!;
  return lcs === 0 ? 0 : (2 * lcs) / (a.length + b.length);
}

async function evalWatchingLoop(body: Parameters<TestServer['operator']['inference']['eval']>[0]['body']) {
  const { result, heldMs } = await measureLoopHold(async () => {
    const response = await fetch(`${svc.baseUrl}/v1/eval`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, answer: await response.json() };
  });
  return { ...result, worstDelayMs: heldMs };
}

test.serial('rouge_l equals the O(n*m) reference on many small random pairs', async (t) => {
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
  const words = ['the', 'cat', 'Cat', 'sat', 'on', 'a', 'mat', '42', 'été', '猫'];
  const text = () => Array.from({ length: next(300) }, () => words[next(words.length)]).join(next(2) ? ' ' : ', ');
  const predictions = Array.from({ length: 200 }, text);
  const references = Array.from({ length: 200 }, text);
  const answer = await svc.operator.inference.eval({ body: { predictions, references, metrics: ['rouge_l'] } });
  answer.items.forEach((item, index) =>
    t.true(Math.abs(item.scores.rouge_l! - referenceRougeL(predictions[index]!, references[index]!)) < 1e-12, `item ${index}`),
  );
});

test.serial('rouge_l on the longest items (16,384 tokens each) is exact, up to the budget, without holding the loop', async (t) => {
  // "a b a b ..." against "b a b a ...": the LCS drops one token; rising against falling distinct tokens share one.
  const rising = Array.from({ length: ITEM / 4 }, (_, index) => index.toString(36).padStart(3, '0')).join(' ');
  const falling = rising.split(' ').reverse().join(' ');
  const { status, answer, worstDelayMs } = await evalWatchingLoop({
    predictions: [longest('a b '), rising, longest('a '), longest('b ')],
    references: [longest('b a '), falling, longest('a '), longest('a ')],
    metrics: ['rouge_l'],
  });
  t.is(status, 200);
  const scores = answer.items.map((item: { scores: { rouge_l: number } }) => item.scores.rouge_l);
  t.true(Math.abs(scores[0] - 16_383 / 16_384) < 1e-12);
  t.true(Math.abs(scores[1] - 1 / (ITEM / 4)) < 1e-12);
  t.deepEqual(scores.slice(2), [1, 0]);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('rouge_l over a full 4 MiB body of the longest items is refused before it runs: 422 eval_work_too_large', async (t) => {
  const { status, answer, worstDelayMs } = await evalWatchingLoop({
    predictions: new Array(FULL_BODY_PAIRS).fill(longest('a b ')),
    references: new Array(FULL_BODY_PAIRS).fill(longest('b a ')),
    metrics: ['exact_match', 'rouge_l'],
  });
  t.is(status, 422);
  t.is(answer.code, 'eval_work_too_large');
  t.regex(answer.error, new RegExp(`may take ${inferenceLimits.evalMaxRougeLWordSteps}\\b`));
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});

test.serial('the linear metrics over a full 4 MiB body answer without holding the loop', async (t) => {
  const predictions = new Array(FULL_BODY_PAIRS).fill(longest('a b '));
  const { status, answer, worstDelayMs } = await evalWatchingLoop({
    predictions,
    references: predictions,
    metrics: ['bleu', 'exact_match', 'token_f1', 'accuracy'],
  });
  t.is(status, 200);
  t.deepEqual(answer.metrics, { bleu: 1, exact_match: 1, token_f1: 1, accuracy: 1 });
  t.is(answer.items.length, FULL_BODY_PAIRS);
  t.true(worstDelayMs < LOOP_BUDGET_MS, `the event loop was held ${worstDelayMs.toFixed(0)} ms`);
});
