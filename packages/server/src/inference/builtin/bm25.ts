import { indexTerms } from './text-units.ts';

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
  const documents = texts.map((text) => {
    const counts = new Map<string, number>();
    for (const term of indexTerms(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
    return counts;
  });
  const lengths = documents.map((counts) => [...counts.values()].reduce((sum, count) => sum + count, 0));
  const documentFrequency = new Map<string, number>();
  for (const counts of documents) for (const term of counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
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
  const terms = [...new Set(indexTerms(query))];
  const ceiling = terms.reduce((sum, term) => sum + idf(index, term) * (BM25_K1 + 1), 0);
  const raw = index.documents.map((counts, documentIndex) => {
    const lengthNorm = 1 - BM25_B + (BM25_B * index.lengths[documentIndex]!) / index.averageLength;
    let score = 0;
    for (const term of terms) {
      const frequency = counts.get(term);
      if (!frequency) continue;
      score += (idf(index, term) * frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * lengthNorm);
    }
    return score;
  });
  const normalised = raw.map((score) => (ceiling > 0 ? Math.min(1, score / ceiling) : 0));
  return { raw, normalised };
}

/** Indices best first; ties keep the documents' order so answers are stable. */
export function rankByScore(scores: readonly number[]): number[] {
  return scores.map((_, index) => index).sort((a, b) => scores[b]! - scores[a]! || a - b);
}
