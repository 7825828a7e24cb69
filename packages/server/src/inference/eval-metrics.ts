/**
 * Standard text metrics, as their reference implementations define them, so a score here means
 * what it means elsewhere:
 * - exact_match and token_f1: the SQuAD evaluation script (lower-case, strip punctuation and the
 *   articles a/an/the, collapse whitespace; F1 over the multiset of tokens).
 * - rouge_l: ROUGE-L F-measure over tokens (longest common subsequence; Lin 2004, beta = 1 as in
 *   Google's rouge-score).
 * - bleu: BLEU-4 (Papineni et al. 2002) with uniform weights and the brevity penalty, add-one
 *   smoothing on orders 2..4 (Lin and Och 2004) so a short sentence without a 4-gram match is not
 *   zero; corpus-level over all items, sentence-level per item.
 * - accuracy: the share of items whose label equals the reference after trimming and lower-casing.
 *
 * Each is linear in its items but ROUGE-L, whose longest common subsequence is O(n * m / 32)
 * (lcs-length.ts); /v1/eval caps a request's ROUGE-L work and runs the scoring in slices.
 */
import { runToEnd, type Steps } from '../bounded/work-in-slices.ts';
import { lcsLength } from './lcs-length.ts';

export function normaliseAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const tokens = (text: string) => normaliseAnswer(text).split(' ').filter(Boolean);

export function exactMatch(prediction: string, reference: string): number {
  return normaliseAnswer(prediction) === normaliseAnswer(reference) ? 1 : 0;
}

export function tokenF1(prediction: string, reference: string): number {
  const predicted = tokens(prediction);
  const expected = tokens(reference);
  if (predicted.length === 0 || expected.length === 0) return predicted.length === expected.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common++;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predicted.length;
  const recall = common / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

/** ROUGE-L tokens: lower-cased words, punctuation dropped, articles kept (rouge-score's tokenizer). */
export const rougeTokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * How many tokens `rougeTokens(text)` would give, without building them: pricing a request from
 * its token counts must not allocate a string per word (a 4 MiB body is a million of them, and
 * the heap they grow stays resident after the request is refused).
 */
export function countRougeTokens(text: string): number {
  // The same pattern as rougeTokens'; a fresh literal each call, so its lastIndex starts at 0.
  const pattern = /[\p{L}\p{N}]+/gu;
  const lowered = text.toLowerCase();
  let count = 0;
  while (pattern.test(lowered)) count++;
  return count;
}

export function rougeL(prediction: string, reference: string): number {
  return runToEnd(rougeLOfTokens(rougeTokens(prediction), rougeTokens(reference)));
}

export function* rougeLOfTokens(predicted: readonly string[], expected: readonly string[]): Steps<number> {
  if (predicted.length === 0 || expected.length === 0) return 0;
  const lcs = yield* lcsLength(predicted, expected);
  if (lcs === 0) return 0;
  const precision = lcs / predicted.length;
  const recall = lcs / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

export interface BleuStats {
  matches: number[];
  totals: number[];
  predictedLength: number;
  referenceLength: number;
}

/** Dense ids for the tokens of both sides, so n-grams are counted by number, not by joined string. */
function tokenIds(predicted: readonly string[], expected: readonly string[]): { predicted: number[]; expected: number[]; width: number } {
  const vocabulary = new Map<string, number>();
  const idsOf = (words: readonly string[]) =>
    words.map((word) => {
      let id = vocabulary.get(word);
      if (id === undefined) {
        id = vocabulary.size;
        vocabulary.set(word, id);
      }
      return id;
    });
  const ids = { predicted: idsOf(predicted), expected: idsOf(expected) };
  return { ...ids, width: vocabulary.size + 1 };
}

/** Clipped matches of two lists of dense gram ids below `size`: counted in arrays, not maps. */
function clippedMatches(predictedGrams: readonly number[], expectedGrams: readonly number[], size: number): number {
  const predictedCounts = new Int32Array(size);
  const expectedCounts = new Int32Array(size);
  for (const gram of predictedGrams) predictedCounts[gram]! += 1;
  for (const gram of expectedGrams) expectedCounts[gram]! += 1;
  let matched = 0;
  for (let gram = 0; gram < size; gram++) matched += Math.min(predictedCounts[gram]!, expectedCounts[gram]!);
  return matched;
}

/**
 * Clipped n-gram matches for orders 1..4. An n-gram is a dense id: the (n-1)-gram's id times the
 * vocabulary width plus the next token's id, renumbered each order so the product stays exact.
 */
export function bleuStatsOfTokens(predictedWords: readonly string[], expectedWords: readonly string[]): BleuStats {
  const { predicted, expected, width } = tokenIds(predictedWords, expectedWords);
  let predictedGrams = predicted;
  let expectedGrams = expected;
  const matches: number[] = [];
  const totals: number[] = [];
  let size = width;
  for (let order = 1; order <= 4; order++) {
    if (order > 1) {
      const renumbered = new Map<number, number>();
      const extend = (previous: readonly number[], words: readonly number[]) => {
        const next: number[] = [];
        for (let index = 0; index + order <= words.length; index++) {
          const key = previous[index]! * width + words[index + order - 1]!;
          let id = renumbered.get(key);
          if (id === undefined) {
            id = renumbered.size;
            renumbered.set(key, id);
          }
          next.push(id);
        }
        return next;
      };
      predictedGrams = extend(predictedGrams, predicted);
      expectedGrams = extend(expectedGrams, expected);
      size = renumbered.size;
    }
    matches.push(clippedMatches(predictedGrams, expectedGrams, size));
    totals.push(predictedGrams.length);
  }
  return { matches, totals, predictedLength: predicted.length, referenceLength: expected.length };
}

function bleuStats(prediction: string, reference: string): BleuStats {
  return bleuStatsOfTokens(rougeTokens(prediction), rougeTokens(reference));
}

export function bleuFrom(stats: BleuStats): number {
  if (stats.predictedLength === 0 || stats.matches[0] === 0) return 0;
  let logSum = 0;
  for (let order = 0; order < 4; order++) {
    const smoothing = order === 0 ? 0 : 1;
    const total = stats.totals[order]! + smoothing;
    if (total === 0) return 0;
    logSum += Math.log((stats.matches[order]! + smoothing) / total) / 4;
  }
  const brevity = stats.predictedLength >= stats.referenceLength ? 1 : Math.exp(1 - stats.referenceLength / stats.predictedLength);
  return brevity * Math.exp(logSum);
}

export function sentenceBleu(prediction: string, reference: string): number {
  return bleuFrom(bleuStats(prediction, reference));
}

export function corpusBleu(predictions: readonly string[], references: readonly string[]): number {
  return corpusBleuOfStats(predictions.map((prediction, index) => bleuStats(prediction, references[index]!)));
}

export function corpusBleuOfStats(itemStats: readonly BleuStats[]): number {
  const sum: BleuStats = { matches: [0, 0, 0, 0], totals: [0, 0, 0, 0], predictedLength: 0, referenceLength: 0 };
  for (const stats of itemStats) {
    for (let order = 0; order < 4; order++) {
      sum.matches[order]! += stats.matches[order]!;
      sum.totals[order]! += stats.totals[order]!;
    }
    sum.predictedLength += stats.predictedLength;
    sum.referenceLength += stats.referenceLength;
  }
  return bleuFrom(sum);
}

export function labelAccuracy(prediction: string, reference: string): number {
  return prediction.trim().toLowerCase() === reference.trim().toLowerCase() ? 1 : 0;
}

export const itemMetrics = {
  exact_match: exactMatch,
  token_f1: tokenF1,
  rouge_l: rougeL,
  bleu: sentenceBleu,
  accuracy: labelAccuracy,
} as const;
