import { indexTerms } from '../text-units.ts';

/**
 * Natural-language inference by lexical cues, for a premise and a hypothesis:
 * - coverage: the share of the hypothesis's content words (stemmed) found in the premise;
 * - conflict: one side negated and the other not, an antonym pair across the two, or a number
 *   in the hypothesis the premise does not state while it states another.
 * High coverage without conflict reads as entailment, high coverage with conflict as
 * contradiction, low coverage as neutral. It cannot follow paraphrase or world knowledge.
 */
export const NLI_LABELS = ['entailment', 'neutral', 'contradiction'] as const;
export const NLI_METHOD =
  "Lexical overlap (share of the hypothesis's stemmed words found in the premise) with negation, antonym and number-mismatch cues for contradiction. No paraphrase or world knowledge; not a neural model.";

const NEGATION = /\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b/i;
const ANTONYMS: ReadonlyArray<readonly [string, string]> = [
  ['open', 'close'],
  ['true', 'fals'],
  ['alway', 'never'],
  ['all', 'none'],
  ['increas', 'decreas'],
  ['win', 'lose'],
  ['up', 'down'],
  ['hot', 'cold'],
  ['good', 'bad'],
  ['larg', 'small'],
  ['big', 'small'],
  ['fast', 'slow'],
  ['aliv', 'dead'],
  ['accept', 'reject'],
  ['success', 'fail'],
  ['arriv', 'depart'],
  ['befor', 'after'],
  ['insid', 'outsid'],
  ['day', 'night'],
  ['old', 'young'],
  ['rich', 'poor'],
  ['happi', 'sad'],
  ['love', 'hate'],
  ['start', 'stop'],
  ['begin', 'end'],
  ['empti', 'full'],
  ['lost', 'found'],
  ['buy', 'sell'],
  ['same', 'differ'],
];

function numbers(text: string): Set<string> {
  return new Set(text.match(/\d+(?:[.,]\d+)?/g) ?? []);
}

export function nliLogits(premise: string, hypothesis: string): number[] {
  const premiseTerms = new Set(indexTerms(premise));
  const hypothesisTerms = [...new Set(indexTerms(hypothesis))];
  const covered = hypothesisTerms.filter((term) => premiseTerms.has(term)).length;
  const coverage = hypothesisTerms.length > 0 ? covered / hypothesisTerms.length : 0;
  const negationMismatch = NEGATION.test(premise) !== NEGATION.test(hypothesis);
  const hypothesisSet = new Set(hypothesisTerms);
  const antonym = ANTONYMS.some(([a, b]) => (premiseTerms.has(a) && hypothesisSet.has(b)) || (premiseTerms.has(b) && hypothesisSet.has(a)));
  const premiseNumbers = numbers(premise);
  const numberConflict = premiseNumbers.size > 0 && [...numbers(hypothesis)].some((value) => !premiseNumbers.has(value));
  const conflict = negationMismatch || antonym || numberConflict ? 1 : 0;
  return [5 * coverage - 3 - 4 * conflict, 1.5 - 2 * coverage, conflict ? 4 * coverage - 1 : -2];
}
