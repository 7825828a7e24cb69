/**
 * The built-in embedding engine: no model weights, no network. A text becomes a fixed-size
 * vector by hashing its word unigrams, word bigrams and character trigrams (of each padded
 * word) into buckets with a signed hash (the "hashing trick"), weighting by sublinear term
 * frequency, then L2-normalising, so the dot product of two vectors is their cosine similarity.
 * Lexical, not semantic in the neural sense: it finds shared words and shared word pieces
 * (`embedding` ~ `embeddings`), which is what a catalog search needs without weights. Common
 * English function words are dropped first.
 */
import { runToEnd, type Steps } from '../bounded/work-in-slices.ts';

export const HASHED_EMBEDDING_MODEL = 'svc-hashed-ngrams-512';
export const HASHED_EMBEDDING_DIMENSIONS = 512;

const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.7;
const TRIGRAM_WEIGHT = 0.35;

/** FNV-1a, 32 bits: fast, stable across runs and platforms (vectors are stored). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Lower-cased word tokens (letters and digits of any script). */
export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Function words carry no topic; left in, a short query's "to" or "for" would dominate its vector. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  'a an and are as at be by for from has have in is it its of on or that the their them this to was were will with without you your we our can do not no'.split(
    ' ',
  ),
);

/** Features added between two yields of `featureSteps`: a few milliseconds. */
const FEATURES_PER_YIELD = 8192;

/**
 * The weighted features of a text, yielding every few thousand of them: one long passage, or
 * one 200,000-letter word, is many steps.
 */
function* featureSteps(text: string): Steps<Map<string, { weight: number; count: number }>> {
  const counts = new Map<string, { weight: number; count: number }>();
  const add = (feature: string, weight: number) => {
    const entry = counts.get(feature);
    if (entry) entry.count++;
    else counts.set(feature, { weight, count: 1 });
  };
  const words = tokenize(text).filter((word) => !STOPWORDS.has(word));
  let added = 0;
  for (const [index, word] of words.entries()) {
    add(`w:${word}`, WORD_WEIGHT);
    if (index > 0) add(`b:${words[index - 1]} ${word}`, BIGRAM_WEIGHT);
    const padded = ` ${word} `;
    for (let start = 0; start + 3 <= padded.length; start++) {
      add(`c:${padded.slice(start, start + 3)}`, TRIGRAM_WEIGHT);
      if (++added % FEATURES_PER_YIELD === 0) yield;
    }
  }
  return counts;
}

/** One L2-normalised vector of `dimensions` numbers; the zero vector for text without words. */
export function embedText(text: string, dimensions = HASHED_EMBEDDING_DIMENSIONS): Float32Array {
  return runToEnd(embedTextSteps(text, dimensions));
}

/** `embedText` in steps: a chat question may be 200,000 characters. */
export function* embedTextSteps(text: string, dimensions = HASHED_EMBEDDING_DIMENSIONS): Steps<Float32Array> {
  const vector = new Float32Array(dimensions);
  let hashed = 0;
  for (const [feature, { weight, count }] of yield* featureSteps(text)) {
    if (++hashed % FEATURES_PER_YIELD === 0) yield;
    const hash = fnv1a(feature);
    // The top bit picks the sign so colliding features tend to cancel rather than pile up.
    const sign = hash & 0x80000000 ? -1 : 1;
    vector[hash % dimensions]! += sign * weight * (1 + Math.log(count));
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let index = 0; index < dimensions; index++) vector[index]! /= norm;
  return vector;
}

/** A vector as its non-zero buckets, in ascending order. */
export interface SparseVector {
  indices: number[];
  /** Float32 values, as the dense vector holds them. */
  values: number[];
}

/**
 * The vector `embedText` gives, kept sparse: a sentence or passage touches a few dozen of the 512
 * buckets, and ranking 300,000 one-word passages densely was 300,000 x 512 steps (seconds).
 * The buckets are filled and normalised in the same order and float32 steps, so every value,
 * and every dot product below, equals the dense one exactly.
 */
export function embedSparse(text: string, dimensions = HASHED_EMBEDDING_DIMENSIONS): SparseVector {
  return runToEnd(embedSparseSteps(text, dimensions));
}

export function* embedSparseSteps(text: string, dimensions = HASHED_EMBEDDING_DIMENSIONS): Steps<SparseVector> {
  const buckets = new Map<number, number>();
  let hashed = 0;
  for (const [feature, { weight, count }] of yield* featureSteps(text)) {
    // One long sentence has hundreds of thousands of distinct n-grams: hashing them is a step of its own.
    if (++hashed % FEATURES_PER_YIELD === 0) yield;
    const hash = fnv1a(feature);
    const sign = hash & 0x80000000 ? -1 : 1;
    const bucket = hash % dimensions;
    buckets.set(bucket, Math.fround((buckets.get(bucket) ?? 0) + sign * weight * (1 + Math.log(count))));
  }
  const indices = [...buckets.keys()].sort((a, b) => a - b);
  const values = indices.map((index) => buckets.get(index)!);
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let index = 0; index < values.length; index++) values[index] = Math.fround(values[index]! / norm);
  return { indices, values };
}

/** `cosine` of a dense vector and a sparse one, summed in bucket order as the dense loop does. */
export function cosineDenseSparse(dense: Float32Array, sparse: SparseVector): number {
  let sum = 0;
  for (let index = 0; index < sparse.indices.length; index++) sum += dense[sparse.indices[index]!]! * sparse.values[index]!;
  return sum;
}

/** `cosine` of two sparse vectors: a merge over their buckets, in bucket order. */
export function cosineSparse(a: SparseVector, b: SparseVector): number {
  let sum = 0;
  let i = 0;
  let j = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const left = a.indices[i]!;
    const right = b.indices[j]!;
    if (left === right) sum += a.values[i++]! * b.values[j++]!;
    else if (left < right) i++;
    else j++;
  }
  return sum;
}

export function cosine(a: Float32Array | number[], b: Float32Array | number[]): number {
  let sum = 0;
  for (let index = 0; index < Math.min(a.length, b.length); index++) sum += a[index]! * b[index]!;
  return sum;
}
