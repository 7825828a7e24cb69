export type ConfidenceBand = 'low' | 'medium' | 'high';

/**
 * How far the top label stands from the runner-up, as a band: a margin of at least 0.4 (in
 * score, 0..1) is `high`, at least 0.15 `medium`, less is `low` (a guess). With a single label
 * (one candidate left) the band follows the score's distance from 0.5 instead, on the same cuts.
 */
export const HIGH_MARGIN = 0.4;
export const MEDIUM_MARGIN = 0.15;

export function confidenceBand(sortedScores: readonly number[]): ConfidenceBand {
  const top = sortedScores[0] ?? 0;
  const margin = sortedScores.length > 1 ? top - sortedScores[1]! : Math.abs(top - 0.5) * 2;
  if (margin >= HIGH_MARGIN) return 'high';
  if (margin >= MEDIUM_MARGIN) return 'medium';
  return 'low';
}

export function softmax(logits: readonly number[]): number[] {
  const top = Math.max(...logits);
  const exps = logits.map((logit) => Math.exp(logit - top));
  const sum = exps.reduce((total, value) => total + value, 0);
  return exps.map((value) => value / sum);
}

export function logistic(logit: number): number {
  return 1 / (1 + Math.exp(-logit));
}
