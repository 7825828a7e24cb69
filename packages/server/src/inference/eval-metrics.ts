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
 */

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

function lcsLength(a: readonly string[], b: readonly string[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const tokenA of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) current[j] = tokenA === b[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    previous = current;
  }
  return previous[b.length]!;
}

/** ROUGE-L tokens: lower-cased words, punctuation dropped, articles kept (rouge-score's tokenizer). */
const rougeTokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export function rougeL(prediction: string, reference: string): number {
  const predicted = rougeTokens(prediction);
  const expected = rougeTokens(reference);
  if (predicted.length === 0 || expected.length === 0) return 0;
  const lcs = lcsLength(predicted, expected);
  if (lcs === 0) return 0;
  const precision = lcs / predicted.length;
  const recall = lcs / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

interface BleuStats {
  matches: number[];
  totals: number[];
  predictedLength: number;
  referenceLength: number;
}

function ngrams(words: readonly string[], order: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let index = 0; index + order <= words.length; index++) {
    const gram = words.slice(index, index + order).join('\u0000');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

function bleuStats(prediction: string, reference: string): BleuStats {
  const predicted = rougeTokens(prediction);
  const expected = rougeTokens(reference);
  const matches: number[] = [];
  const totals: number[] = [];
  for (let order = 1; order <= 4; order++) {
    const referenceGrams = ngrams(expected, order);
    let matched = 0;
    let total = 0;
    for (const [gram, count] of ngrams(predicted, order)) {
      matched += Math.min(count, referenceGrams.get(gram) ?? 0);
      total += count;
    }
    matches.push(matched);
    totals.push(total);
  }
  return { matches, totals, predictedLength: predicted.length, referenceLength: expected.length };
}

function bleuFrom(stats: BleuStats): number {
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
  const sum: BleuStats = { matches: [0, 0, 0, 0], totals: [0, 0, 0, 0], predictedLength: 0, referenceLength: 0 };
  predictions.forEach((prediction, index) => {
    const stats = bleuStats(prediction, references[index]!);
    for (let order = 0; order < 4; order++) {
      sum.matches[order]! += stats.matches[order]!;
      sum.totals[order]! += stats.totals[order]!;
    }
    sum.predictedLength += stats.predictedLength;
    sum.referenceLength += stats.referenceLength;
  });
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
