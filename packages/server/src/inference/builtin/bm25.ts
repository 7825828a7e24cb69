import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { indexTermsSteps } from './text-units.ts';

/** Characters of text indexed, or term lookups made while scoring, between two yields. */
const CHARS_PER_YIELD = 16_384;
const LOOKUPS_PER_YIELD = 16_384;

/**
 * Okapi BM25 with the usual parameters: k1 = 1.2 (how fast a term's repeats saturate) and
 * b = 0.75 (how much a long document is penalised), and the non-negative IDF
 * ln(1 + (N - n + 0.5) / (n + 0.5)) so a term in every document still counts a little.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Each document's term counts and length. No corpus-wide table of document frequencies: only the
 * query's terms need one, and scoring counts them (bm25ScoresSteps). A table of every distinct
 * term of a 4 MiB body (640,000 of them) grew by rehashing its whole self, one step of tens of
 * milliseconds, and kept the collector busy; the query's table stays small.
 */
export interface Bm25Index {
  documents: Array<Map<string, number>>;
  lengths: number[];
  averageLength: number;
}

export function buildBm25Index(texts: readonly string[]): Bm25Index {
  return runToEnd(buildBm25IndexSteps(texts));
}

export function* buildBm25IndexSteps(texts: readonly string[]): Steps<Bm25Index> {
  const documents: Array<Map<string, number>> = [];
  const lengths: number[] = [];
  let sinceYield = 0;
  for (const text of texts) {
    const counts = new Map<string, number>();
    const terms = yield* indexTermsSteps(text);
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    documents.push(counts);
    lengths.push(terms.length);
    // A tiny document still costs a map: it counts as 64 characters.
    sinceYield += text.length + 64;
    if (sinceYield >= CHARS_PER_YIELD) {
      sinceYield = 0;
      yield;
    }
  }
  const averageLength = lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, lengths.length);
  return { documents, lengths, averageLength: averageLength || 1 };
}

function idfOf(documentCount: number, withTerm: number): number {
  return Math.log(1 + (documentCount - withTerm + 0.5) / (withTerm + 0.5));
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
  const termOrder = new Map(terms.map((term, order) => [term, order]));
  /*
   * The query's terms each document holds, in query order, and how many documents hold each term.
   * Walking every query term for every document is documents x terms (300,000 one-word passages
   * against a 4,000-character question: seconds); walking the smaller side keeps it linear in the
   * text, and the lookups made count towards a yield, so 128 documents of 32,768 characters are
   * many steps, not one.
   */
  const withTerm = new Array<number>(terms.length).fill(0);
  const held: number[][] = [];
  let lookups = 0;
  for (const counts of index.documents) {
    const orders: number[] = [];
    if (counts.size < terms.length) {
      for (const term of counts.keys()) {
        const order = termOrder.get(term);
        if (order !== undefined) orders.push(order);
      }
      orders.sort((a, b) => a - b);
      lookups += counts.size;
    } else {
      for (let order = 0; order < terms.length; order++) if (counts.has(terms[order]!)) orders.push(order);
      lookups += terms.length;
    }
    for (const order of orders) withTerm[order]!++;
    held.push(orders);
    if (lookups >= LOOKUPS_PER_YIELD) {
      lookups = 0;
      yield;
    }
  }
  const documentCount = index.documents.length;
  const idf = withTerm.map((count) => idfOf(documentCount, count));
  const ceiling = idf.reduce((sum, value) => sum + value * (BM25_K1 + 1), 0);
  const raw: number[] = [];
  for (const [documentIndex, counts] of index.documents.entries()) {
    const lengthNorm = 1 - BM25_B + (BM25_B * index.lengths[documentIndex]!) / index.averageLength;
    // Summed in query order, whichever side was walked, so scores do not depend on it.
    let score = 0;
    const orders = held[documentIndex]!;
    for (const order of orders) {
      const frequency = counts.get(terms[order]!)!;
      score += (idf[order]! * frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * lengthNorm);
    }
    raw.push(score);
    lookups += orders.length + 1;
    if (lookups >= LOOKUPS_PER_YIELD) {
      lookups = 0;
      yield;
    }
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
