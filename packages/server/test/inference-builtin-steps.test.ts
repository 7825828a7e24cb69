import test from 'ava';
import { inferenceLimits as limits } from '@svc/schemas';
import { runToEnd, type Steps } from '../src/bounded/work-in-slices.ts';
import { extractiveChat } from '../src/inference/builtin/extractive-chat.ts';
import { extractiveRagSteps } from '../src/inference/builtin/extractive-rag.ts';
import { embedSparse } from '../src/inference/hashed-embeddings.ts';
import { threadCpuMs } from './helpers/loop-hold.ts';

/**
 * How finely the built-in engine's retrieval is cut into steps (work-in-slices.ts runs them with a
 * turn of the event loop between slices, so one step is the least a caller can hold the loop for).
 * Each step is held to a multiple of one baseline measured in this process, not to milliseconds:
 * the machine's speed varies, the ratio does not. The baseline is the step's intended size, the
 * sparse vector of 8 KiB of distinct words (EMBED_CHARS_PER_YIELD in extractive-rag.ts). Before,
 * retrieval embedded 512 passages per step whatever their length (512 passages of 600 characters:
 * one step of 45 to 50 ms, over 20 baselines), and split all the documents in one step; a chat
 * call embedded svc's own documentation in one step of 12 to 25 ms, every call.
 */
const MAX_STEP_IN_BASELINES = 8;
const RUNS = 3;

/** Distinct words, about six characters each, with no sentence end: one passage per document, cut by the embedder's own yields. */
const distinctWords = (length: number, seed: number) =>
  Array.from({ length: Math.ceil(length / 6) }, (_, index) => `w${(index * 7919 + seed).toString(36)}`)
    .join(' ')
    .slice(0, length);
/** Sentences of about 50 characters: passages of about 600. */
const sentences = (length: number, seed: number) =>
  Array.from({ length: Math.ceil(length / 50) }, (_, index) => `Refund ${index + seed} takes w${(index * 7919).toString(36)} days here. `)
    .join('')
    .slice(0, length);

/** The fastest of a few runs of `work`, in ms. */
function fastest(work: () => void): number {
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const began = performance.now();
    work();
    best = Math.min(best, performance.now() - began);
  }
  return best;
}

/**
 * The longest single step of the generator, in ms: the best of RUNS runs. A step counts its wall
 * time or this thread's CPU time, the less (as loop-hold.ts does): a step the machine paused,
 * with other test files beside this one, is not a long step.
 */
function longestStep<T>(makeSteps: () => Steps<T>): number {
  let best = Infinity;
  for (let run = 0; run < RUNS; run++) {
    const steps = makeSteps();
    let longest = 0;
    for (;;) {
      const began = performance.now();
      const cpuBefore = threadCpuMs();
      const step = steps.next();
      longest = Math.max(longest, Math.min(performance.now() - began, threadCpuMs() - cpuBefore));
      if (step.done) break;
    }
    best = Math.min(best, longest);
  }
  return best;
}

const baselineText = distinctWords(8_192, 7);
let baselineMs = 0;
test.before(() => {
  // Compiled first, so the baseline is the work and not the compiler.
  runToEnd(extractiveRagSteps('warm up', [{ index: 0, text: sentences(20_000, 1) }], 5));
  baselineMs = fastest(() => embedSparse(baselineText));
});

const ragShapes: Array<[string, (seed: number) => string]> = [
  ['one 10,000-character passage each', (seed) => distinctWords(limits.ragMaxTotalChars / limits.ragMaxDocuments, seed)],
  ['sentences, about 16 passages each', (seed) => sentences(limits.ragMaxTotalChars / limits.ragMaxDocuments, seed)],
];

for (const [shape, text] of ragShapes) {
  test.serial(`rag: 100 documents of 10,000 characters (${shape}) are retrieved in steps of a few baselines`, (t) => {
    const documents = Array.from({ length: limits.ragMaxDocuments }, (_, index) => ({ index, text: text(index) }));
    const question = distinctWords(limits.ragMaxQuestionChars, 3);
    const longest = longestStep(() => extractiveRagSteps(question, documents, limits.ragMaxTopK));
    t.log(`longest step ${longest.toFixed(1)} ms, ${(longest / baselineMs).toFixed(1)} baselines of ${baselineMs.toFixed(2)} ms`);
    t.true(longest <= MAX_STEP_IN_BASELINES * baselineMs, `a step took ${(longest / baselineMs).toFixed(1)} baselines`);
  });
}

test.serial('chat: a question over 100 earlier messages of 4,000 characters is answered in steps of a few baselines', (t) => {
  const earlier = Array.from({ length: 100 }, (_, index) => ({
    role: index % 2 ? ('assistant' as const) : ('user' as const),
    content: sentences(4_000, index),
  }));
  const messages = [...earlier, { role: 'user' as const, content: 'how many days does refund 7 take?' }];
  const longest = longestStep(() => extractiveChat({ messages }));
  t.log(`longest step ${longest.toFixed(1)} ms, ${(longest / baselineMs).toFixed(1)} baselines of ${baselineMs.toFixed(2)} ms`);
  t.true(longest <= MAX_STEP_IN_BASELINES * baselineMs, `a step took ${(longest / baselineMs).toFixed(1)} baselines`);
});
