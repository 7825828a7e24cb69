import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { indexTermsSteps } from './text-units.ts';

/** Characters of text indexed, or documents scored, between two yields. */
const CHARS_PER_YIELD = 16_384;
const DOCUMENTS_PER_YIELD = 4096;

/**
 * Okapi BM25 with the usual parameters: k1 = 1.2 (how fast a term's repeats saturate) and
 * b = 0.75 (how much a long document is penalised), and the non-negative IDF
 * ln(1 + (N - n + 0.5) / (n + 0.5)) so a term in every document still counts a little.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Index {
  documents: Array<Map<string, number>>;
  lengths: number[];
  averageLength: number;
  documentFrequency: Map<string, number>;
}

export function buildBm25Index(texts: readonly string[]): Bm25Index {
  return runToEnd(buildBm25IndexSteps(texts));
}

export function* buildBm25IndexSteps(texts: readonly string[]): Steps<Bm25Index> {
  const documents: Array<Map<string, number>> = [];
  let sinceYield = 0;
  for (const text of texts) {
    const counts = new Map<string, number>();
    for (const term of yield* indexTermsSteps(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
    documents.push(counts);
    // A tiny document still costs a map: it counts as 64 characters.
    sinceYield += text.length + 64;
    if (sinceYield >= CHARS_PER_YIELD) {
      sinceYield = 0;
      yield;
    }
  }
  const lengths: number[] = [];
  const documentFrequency = new Map<string, number>();
  for (const counts of documents) {
    let length = 0;
    for (const [term, count] of counts) {
      length += count;
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    lengths.push(length);
    sinceYield += counts.size * 4;
    if (sinceYield >= CHARS_PER_YIELD) {
      sinceYield = 0;
      yield;
    }
  }
  const averageLength = lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, lengths.length);
  return { documents, lengths, averageLength: averageLength || 1, documentFrequency };
}

function idf(index: Bm25Index, term: string): number {
  const n = index.documentFrequency.get(term) ?? 0;
  return Math.log(1 + (index.documents.length - n + 0.5) / (n + 0.5));
}

/**
 * Each document's BM25 score for the query, and each score as a share of the query's ceiling:
 * the sum over the query's distinct terms of idf * (k1 + 1), the value BM25 approaches when
 * every query term repeats without bound in a document of average length. That share is the
 * 0..1 `relevance_score`: absolute for the query (0 means no query term occurs), not a rank.
 */
export function bm25Scores(index: Bm25Index, query: string): { raw: number[]; normalised: number[] } {
  return runToEnd(bm25ScoresSteps(index, query));
}

export function* bm25ScoresSteps(index: Bm25Index, query: string): Steps<{ raw: number[]; normalised: number[] }> {
  const terms = [...new Set(yield* indexTermsSteps(query))];
  const ceiling = terms.reduce((sum, term) => sum + idf(index, term) * (BM25_K1 + 1), 0);
  const termOrder = new Map(terms.map((term, order) => [term, order]));
  const raw: number[] = [];
  for (const [documentIndex, counts] of index.documents.entries()) {
    if ((documentIndex + 1) % DOCUMENTS_PER_YIELD === 0) yield;
    const lengthNorm = 1 - BM25_B + (BM25_B * index.lengths[documentIndex]!) / index.averageLength;
    /*
     * Walking every query term for every document is documents x terms (300,000 one-word
     * passages against a 4,000-character question: seconds); walking the smaller side keeps it
     * linear in the text. Matches are summed in query order either way, so scores are unchanged.
     */
    let matched: string[];
    if (counts.size < terms.length) {
      const orders: number[] = [];
      for (const term of counts.keys()) {
        const order = termOrder.get(term);
        if (order !== undefined) orders.push(order);
      }
      matched = orders.sort((a, b) => a - b).map((order) => terms[order]!);
    } else matched = terms;
    let score = 0;
    for (const term of matched) {
      const frequency = counts.get(term);
      if (!frequency) continue;
      score += (idf(index, term) * frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * lengthNorm);
    }
    raw.push(score);
  }
  const normalised = raw.map((score) => (ceiling > 0 ? Math.min(1, score / ceiling) : 0));
  return { raw, normalised };
}

/** Indices best first; ties keep the documents' order so answers are stable. */
export function rankByScore(scores: readonly number[]): number[] {
  return scores.map((_, index) => index).sort((a, b) => scores[b]! - scores[a]! || a - b);
}

/** Comparisons between two yields of `rankByScoreSteps`. */
const COMPARISONS_PER_YIELD = 65_536;

/**
 * `rankByScore` as a bottom-up merge sort that yields as it goes: 300,000 passages take a
 * comparison sort over 100 ms. The order is total (score, then index), so it is the same order.
 */
export function* rankByScoreSteps(scores: readonly number[]): Steps<number[]> {
  let from = scores.map((_, index) => index);
  let to = new Array<number>(from.length);
  const before = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
  let comparisons = 0;
  for (let width = 1; width < from.length; width *= 2) {
    for (let start = 0; start < from.length; start += 2 * width) {
      const middle = Math.min(start + width, from.length);
      const end = Math.min(start + 2 * width, from.length);
      let left = start;
      let right = middle;
      for (let out = start; out < end; out++) to[out] = right >= end || (left < middle && before(from[left]!, from[right]!)) ? from[left++]! : from[right++]!;
      comparisons += end - start;
      if (comparisons >= COMPARISONS_PER_YIELD) {
        comparisons = 0;
        yield;
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
