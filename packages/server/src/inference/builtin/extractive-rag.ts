import type { RagPassage } from '@svc/schemas';
import { cosineDenseSparse, embedSparseSteps, embedTextSteps } from '../hashed-embeddings.ts';
import type { RagDocument, RagResult } from '../provider.ts';
import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { bm25ScoresSteps, buildBm25IndexSteps, rankByScoreSteps } from './bm25.ts';
import { splitPassagesSteps, type Passage } from './passages.ts';
import { countWordTokens, indexTerms, indexTermsSteps, type TextSpan } from './text-units.ts';

/** Reciprocal rank fusion's constant (Cormack et al., 2009): damps the weight of the very top ranks. */
const RRF_K = 60;
/**
 * A question is answerable when its best passage reaches this share of the BM25 ceiling (see
 * bm25.ts) and shares a content word with it: below, the passages only brush the question.
 */
export const ANSWERABLE_MIN_RELEVANCE = 0.15;
/** Passages whose BM25 share falls below this are not cited, even when within top_k. */
const CITE_MIN_RELEVANCE = 0.08;

export const NOT_ANSWERABLE =
  'The documents do not contain an answer to this question: no passage shares enough of its words. (svc-extractive-rag only quotes the documents; it does not guess.)';

interface ScoredPassage {
  passage: Passage;
  relevance: number;
  fused: number;
}

/**
 * Retrieval: BM25 over the passages, fused by reciprocal rank with the cosine of hashed n-gram
 * vectors (which catches shared word pieces BM25's whole words miss). Best first.
 */
export function retrievePassages(question: string, documents: readonly RagDocument[]): ScoredPassage[] {
  return runToEnd(retrievePassagesSteps(question, documents));
}

/**
 * Characters of passages embedded between two yields: a few milliseconds (0.2 to 0.4 µs a
 * character here). Counted in characters, not passages: 512 passages of 600 characters were one
 * step of 45 to 50 ms (inference-builtin-steps.test.ts). Each passage counts at least 64, for its
 * vector's own cost.
 */
const EMBED_CHARS_PER_YIELD = 8_192;

export function* retrievePassagesSteps(question: string, documents: readonly RagDocument[]): Steps<ScoredPassage[]> {
  const passages: Passage[] = [];
  for (const document of documents) {
    passages.push(...(yield* splitPassagesSteps(document.text, document.index)));
    // A document under the splitter's own yield (255 sentences) is still a step: 100 of them were 20 ms at once.
    yield;
  }
  if (passages.length === 0) return [];
  const { normalised } = yield* bm25ScoresSteps(yield* buildBm25IndexSteps(passages.map((passage) => passage.text)), question);
  const questionVector = yield* embedTextSteps(question);
  const similarities: number[] = [];
  let charsSinceYield = 0;
  for (const passage of passages) {
    similarities.push(cosineDenseSparse(questionVector, yield* embedSparseSteps(passage.text)));
    charsSinceYield += passage.text.length + 64;
    if (charsSinceYield >= EMBED_CHARS_PER_YIELD) {
      charsSinceYield = 0;
      yield;
    }
  }
  const fused = new Array<number>(passages.length).fill(0);
  (yield* rankByScoreSteps(normalised)).forEach((passageIndex, rank) => (fused[passageIndex]! += 1 / (RRF_K + rank + 1)));
  (yield* rankByScoreSteps(similarities)).forEach((passageIndex, rank) => (fused[passageIndex]! += 1 / (RRF_K + rank + 1)));
  return (yield* rankByScoreSteps(fused)).map((passageIndex) => ({
    passage: passages[passageIndex]!,
    relevance: normalised[passageIndex]!,
    fused: fused[passageIndex]!,
  }));
}

/** The sentence of a passage that shares most of the question's words (the first, on a tie). */
function* bestSentence(passage: Passage, questionTerms: ReadonlySet<string>): Steps<TextSpan> {
  let best = passage.sentences[0]!;
  let bestOverlap = -1;
  for (const sentence of passage.sentences) {
    const overlap = new Set((yield* indexTermsSteps(sentence.text)).filter((term) => questionTerms.has(term))).size;
    if (overlap > bestOverlap) [best, bestOverlap] = [sentence, overlap];
  }
  return best;
}

function toRagPassage(documents: readonly RagDocument[], span: TextSpan & { documentIndex: number }, score: number): RagPassage {
  const id = documents.find((document) => document.index === span.documentIndex)?.id;
  return { document_index: span.documentIndex, ...(id !== undefined ? { document_id: id } : {}), start: span.start, end: span.end, text: span.text, score };
}

/**
 * An extractive answer: the best sentence of each cited passage, quoted verbatim and followed by
 * its marker [n]; each citation's offsets point at exactly the quoted sentence in its document.
 * With no passage relevant enough, `answerable` is false and the answer says so.
 */
export function extractiveRag(question: string, documents: readonly RagDocument[], topK: number): Omit<RagResult, 'usage'> & { usage: RagResult['usage'] } {
  return runToEnd(extractiveRagSteps(question, documents, topK));
}

export function* extractiveRagSteps(
  question: string,
  documents: readonly RagDocument[],
  topK: number,
): Steps<Omit<RagResult, 'usage'> & { usage: RagResult['usage'] }> {
  const ranked = (yield* retrievePassagesSteps(question, documents)).slice(0, topK);
  const passages = ranked.map(({ passage, relevance }) => toRagPassage(documents, passage, relevance));
  const questionTerms = new Set(indexTerms(question));
  const answerable = ranked.length > 0 && ranked[0]!.relevance >= ANSWERABLE_MIN_RELEVANCE;
  const citations: RagResult['citations'] = [];
  if (answerable) {
    for (const { passage, relevance } of ranked) {
      if (relevance < CITE_MIN_RELEVANCE) continue;
      const sentence = yield* bestSentence(passage, questionTerms);
      if (citations.some((citation) => citation.document_index === passage.documentIndex && citation.start === sentence.start)) continue;
      citations.push({ ...toRagPassage(documents, { ...sentence, documentIndex: passage.documentIndex }, relevance), marker: citations.length + 1 });
    }
  }
  const answer = answerable ? citations.map((citation) => `"${citation.text}" [${citation.marker}]`).join(' ') : NOT_ANSWERABLE;
  let promptTokens = countWordTokens(question);
  for (const document of documents) {
    promptTokens += countWordTokens(document.text);
    yield;
  }
  const completionTokens = countWordTokens(answer);
  return {
    answer,
    citations,
    passages,
    answerable,
    extractive: true,
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, units: documents.length },
  };
}
