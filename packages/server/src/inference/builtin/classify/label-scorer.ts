/**
 * One classical classifier: its labels and, for a text, one logit (evidence) per label. The
 * shared code turns logits into scores (softmax for one label, a logistic per label for
 * `multi_label`) and a confidence band, so every task reports the same way.
 */
export interface LabelScorer {
  labels: readonly string[];
  method: string;
  logits(text: string): number[];
}

export const SENTENCE_BREAK = /[.!?;:,\n]/;
