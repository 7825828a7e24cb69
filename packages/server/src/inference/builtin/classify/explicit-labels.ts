import { cosine, embedText } from '../../hashed-embeddings.ts';
import type { LabelScorer } from './label-scorer.ts';

/** Cosines of hashed vectors are small (0..0.5 for related short texts); this spreads them into logits. */
const SIMILARITY_SCALE = 12;
/** For multi_label: a label is on when its cosine passes this. */
const SIMILARITY_OFFSET = 0.2;

/**
 * Explicit labels by lexical similarity: the cosine between the text's hashed n-gram vector and
 * each label's (the label's own words and word pieces). A label that shares no word or word piece
 * with the text scores near zero; a description-like label ("billing question") works better
 * than a code ("B7").
 */
export function explicitLabelScorer(labels: readonly string[]): LabelScorer {
  const labelVectors = labels.map((label) => embedText(label.replace(/[_-]+/g, ' ')));
  return {
    labels,
    method:
      'Similarity of the text to each label: cosine of hashed word and character n-gram vectors (svc-hashed-ngrams-512). Lexical, not semantic; not a neural model.',
    logits(text) {
      const vector = embedText(text);
      return labelVectors.map((labelVector) => (cosine(vector, labelVector) - SIMILARITY_OFFSET) * SIMILARITY_SCALE);
    },
  };
}
