import { stemmedWords } from '../text-units.ts';
import type { LabelScorer } from './label-scorer.ts';

/**
 * Support-ticket routing labels and the keywords (stemmed on load) that vote for each. A ticket's
 * logit for a label is the number of its distinct words in that label's list; `other` holds a
 * constant logit, so a ticket that names none of the keywords is `other` with low confidence.
 */
export const TICKET_KEYWORDS: Readonly<Record<string, string>> = {
  billing:
    'bill billing invoice charge charged refund payment pay paid price pricing subscription plan credit card receipt overcharged cost fee renew renewal cancel upgrade downgrade discount',
  bug: 'bug error crash crashes broken fail fails failed failing exception freeze stuck wrong issue problem doesnt 500 timeout glitch unexpected regression works stopped',
  account:
    'account login log sign password reset locked email username profile access 2fa two factor authentication verify verification delete deactivate permission',
  feature_request: 'feature request suggest suggestion add support would nice wish could please allow option integration improve improvement roadmap idea',
  how_to: 'how what where which guide docs documentation tutorial example explain setup set configure configuration install use using step',
};
const OTHER_LOGIT = 0.5;

const keywordSets = Object.fromEntries(Object.entries(TICKET_KEYWORDS).map(([label, words]) => [label, new Set(stemmedWords(words))]));

export const ticketsScorer: LabelScorer = {
  labels: [...Object.keys(TICKET_KEYWORDS), 'other'],
  method:
    "Keyword voting: the distinct (stemmed) words a ticket shares with each label's keyword list (billing, bug, account, feature_request, how_to; otherwise other). Not a neural model.",
  logits(text) {
    const terms = new Set(stemmedWords(text));
    const votes = Object.values(keywordSets).map((keywords) => [...terms].filter((term) => keywords.has(term)).length);
    return [...votes, OTHER_LOGIT];
  },
};
