import type { InferenceProvider, ModelEntry } from '../provider.ts';
import { embedText, HASHED_EMBEDDING_DIMENSIONS, HASHED_EMBEDDING_MODEL, tokenize } from '../hashed-embeddings.ts';

/** The engine that needs no network and no model weights: classical methods, labelled as such. */
export const BUILTIN_ENGINE_ID = 'builtin';

/** Truncates a unit vector to its first `dimensions` numbers and renormalises it (what OpenAI's `dimensions` does). */
function shorten(vector: Float32Array, dimensions: number): Float32Array {
  if (dimensions >= vector.length) return vector;
  const short = vector.slice(0, dimensions);
  let norm = 0;
  for (const value of short) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let index = 0; index < short.length; index++) short[index]! /= norm;
  return short;
}

export const hashedEmbeddingModel: ModelEntry = {
  id: HASHED_EMBEDDING_MODEL,
  engine: BUILTIN_ENGINE_ID,
  engineModel: HASHED_EMBEDDING_MODEL,
  capabilities: ['embeddings'],
  method: 'classical',
  label: 'Hashed n-gram embeddings (512 dimensions)',
  description: 'Word unigrams and bigrams and character trigrams hashed into 512 signed buckets, L2-normalised. No model weights; lexical similarity, not a neural model. `dimensions` 1..512 truncates and renormalises.',
  dimensions: HASHED_EMBEDDING_DIMENSIONS,
  fallbacks: [],
};

/** Every model of the built-in engine, registered at start-up. */
export const builtinModels: ModelEntry[] = [hashedEmbeddingModel];

export function createBuiltinProvider(): InferenceProvider {
  return {
    id: BUILTIN_ENGINE_ID,
    kind: 'builtin',
    label: 'Built-in (classical methods, no model weights)',
    description: 'Runs in the server process with no network and no downloaded weights: hashed n-gram embeddings, lexical ranking and extractive methods. Useful everywhere, not a neural model.',
    available: () => true,
    async embed({ inputs, dimensions }) {
      let tokens = 0;
      const vectors = inputs.map((input) => {
        tokens += tokenize(input).length;
        const vector = embedText(input);
        return dimensions !== undefined ? shorten(vector, dimensions) : vector;
      });
      return { vectors, usage: { prompt_tokens: tokens, total_tokens: tokens, units: inputs.length } };
    },
  };
}
