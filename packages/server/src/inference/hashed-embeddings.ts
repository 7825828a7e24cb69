/**
 * The built-in embedding engine: no model weights, no network. A text becomes a fixed-size
 * vector by hashing its word unigrams, word bigrams and character trigrams (of each padded
 * word) into buckets with a signed hash (the "hashing trick"), weighting by sublinear term
 * frequency, then L2-normalising, so the dot product of two vectors is their cosine similarity.
 * Lexical, not semantic in the neural sense: it finds shared words and shared word pieces
 * (`embedding` ~ `embeddings`), which is what a catalog search needs without weights. Common
 * English function words are dropped first.
 */
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
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Function words carry no topic; left in, a short query's "to" or "for" would dominate its vector. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  'a an and are as at be by for from has have in is it its of on or that the their them this to was were will with without you your we our can do not no'.split(' '),
);

function features(text: string): Map<string, { weight: number; count: number }> {
  const counts = new Map<string, { weight: number; count: number }>();
  const add = (feature: string, weight: number) => {
    const entry = counts.get(feature);
    if (entry) entry.count++;
    else counts.set(feature, { weight, count: 1 });
  };
  const words = tokenize(text).filter((word) => !STOPWORDS.has(word));
  words.forEach((word, index) => {
    add(`w:${word}`, WORD_WEIGHT);
    if (index > 0) add(`b:${words[index - 1]} ${word}`, BIGRAM_WEIGHT);
    const padded = ` ${word} `;
    for (let start = 0; start + 3 <= padded.length; start++) add(`c:${padded.slice(start, start + 3)}`, TRIGRAM_WEIGHT);
  });
  return counts;
}

/** One L2-normalised vector of `dimensions` numbers; the zero vector for text without words. */
export function embedText(text: string, dimensions = HASHED_EMBEDDING_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  for (const [feature, { weight, count }] of features(text)) {
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

export function cosine(a: Float32Array | number[], b: Float32Array | number[]): number {
  let sum = 0;
  for (let index = 0; index < Math.min(a.length, b.length); index++) sum += a[index]! * b[index]!;
  return sum;
}
