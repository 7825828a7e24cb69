import type { SummarySentence } from '@svc/schemas';
import { cosineSparse, embedSparseSteps, type SparseVector } from '../hashed-embeddings.ts';
import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { splitSentencesSteps } from './text-units.ts';

/** PageRank's damping factor, as in TextRank (Mihalcea and Tarau, 2004). */
const DAMPING = 0.85;
const MAX_ITERATIONS = 50;
const TOLERANCE = 1e-6;
/** Sentences ranked at most: the graph is quadratic in them, so a very long text is read in its first part. */
export const TEXTRANK_MAX_SENTENCES = 600;

/**
 * TextRank over sentences: a graph whose edge weights are the cosine similarity of the
 * sentences' hashed word and character n-gram vectors (shared words, and shared word pieces,
 * so `summary` and `summaries` meet), ranked by weighted PageRank. The best `maxSentences` are
 * answered in text order with their UTF-16 offsets into the original text (end exclusive).
 */
export function textRankSummary(text: string, maxSentences: number): SummarySentence[] {
  return runToEnd(textRankSteps(text, maxSentences));
}

/**
 * The same, yielding between rows of the graph and PageRank's rounds. The graph is quadratic in
 * the sentences, hence their cap; sparse vectors make each pair a merge of a few dozen buckets.
 */
export function* textRankSteps(text: string, maxSentences: number): Steps<SummarySentence[]> {
  const sentences = (yield* splitSentencesSteps(text)).slice(0, TEXTRANK_MAX_SENTENCES);
  if (sentences.length === 0) return [];
  const vectors: SparseVector[] = [];
  for (const sentence of sentences) {
    vectors.push(yield* embedSparseSteps(sentence.text));
    yield;
  }
  const count = sentences.length;
  const weights = Array.from({ length: count }, () => new Float64Array(count));
  const outSums = new Float64Array(count);
  for (let a = 0; a < count; a++) {
    if (a % 8 === 0) yield;
    for (let b = a + 1; b < count; b++) {
      const similarity = Math.max(0, cosineSparse(vectors[a]!, vectors[b]!));
      weights[a]![b] = similarity;
      weights[b]![a] = similarity;
      outSums[a]! += similarity;
      outSums[b]! += similarity;
    }
  }
  let ranks = new Float64Array(count).fill(1 / count);
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    yield;
    const next = new Float64Array(count).fill((1 - DAMPING) / count);
    for (let from = 0; from < count; from++) {
      // A sentence that shares nothing with the rest spreads its rank evenly (a dangling node).
      if (outSums[from] === 0) {
        for (let to = 0; to < count; to++) next[to]! += (DAMPING * ranks[from]!) / count;
        continue;
      }
      for (let to = 0; to < count; to++) if (weights[from]![to]! > 0) next[to]! += (DAMPING * ranks[from]! * weights[from]![to]!) / outSums[from]!;
    }
    const change = next.reduce((sum, value, index) => sum + Math.abs(value - ranks[index]!), 0);
    ranks = next;
    if (change < TOLERANCE) break;
  }
  const chosen = [...sentences.keys()]
    .sort((a, b) => ranks[b]! - ranks[a]! || a - b)
    .slice(0, maxSentences)
    .sort((a, b) => a - b);
  return chosen.map((index) => ({ ...sentences[index]!, score: ranks[index]! }));
}
