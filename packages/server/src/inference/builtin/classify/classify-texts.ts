import type { ClassifyBody, ClassifyResponse, ClassifyTask } from '@svc/schemas';
import { runToEnd, type Steps } from '../../../bounded/work-in-slices.ts';
import { countWordTokens } from '../text-units.ts';
import { confidenceBand, logistic, softmax } from './confidence.ts';
import { explicitLabelScorer } from './explicit-labels.ts';
import type { LabelScorer } from './label-scorer.ts';
import { NLI_LABELS, NLI_METHOD, nliLogits } from './nli.ts';
import { promptInjectionScorer } from './prompt-injection.ts';
import { sentimentScorer } from './sentiment.ts';
import { ticketsScorer } from './tickets.ts';
import { toxicityScorer } from './toxicity.ts';

type ClassifyResult = ClassifyResponse['results'][number];

const taskScorers: Record<Exclude<ClassifyTask, 'other' | 'nli'>, LabelScorer> = {
  sentiment: sentimentScorer,
  toxicity: toxicityScorer,
  prompt_injection: promptInjectionScorer,
  tickets: ticketsScorer,
};

/**
 * The scorer for a request. Explicit labels that are all among the task's own labels keep the
 * task's method, restricted to them (`sentiment` with `["positive", "negative"]` drops neutral);
 * any other explicit labels are scored by similarity to the text, and `method` says so.
 */
function scorerFor(task: Exclude<ClassifyTask, 'nli'>, labels: readonly string[] | undefined): LabelScorer {
  if (task === 'other') return explicitLabelScorer(labels!);
  const own = taskScorers[task];
  if (!labels) return own;
  if (!labels.every((label) => own.labels.includes(label))) return explicitLabelScorer(labels);
  const positions = labels.map((label) => own.labels.indexOf(label));
  return { labels, method: own.method, logits: (text) => ((all) => positions.map((position) => all[position]!))(own.logits(text)) };
}

/** Scores from logits: a distribution (softmax), or with multi_label one logistic per label. */
function toResult(index: number, labels: readonly string[], logits: number[], multiLabel: boolean): ClassifyResult {
  const scores = multiLabel ? logits.map(logistic) : softmax(logits);
  const ranked = labels.map((label, position) => ({ label, score: scores[position]! })).sort((a, b) => b.score - a.score);
  return { index, label: ranked[0]!.label, score: ranked[0]!.score, confidence: confidenceBand(ranked.map((entry) => entry.score)), scores: ranked };
}

/** Classifies every text (or nli pair) of a request with the built-in classical methods. */
export function classifyTexts(body: ClassifyBody): Pick<ClassifyResponse, 'results' | 'method' | 'usage'> {
  return runToEnd(classifyTextsSteps(body));
}

/** The same, yielding after each text (at most 32,768 characters) so a request runs in slices. */
export function* classifyTextsSteps(body: ClassifyBody): Steps<Pick<ClassifyResponse, 'results' | 'method' | 'usage'>> {
  if (body.task === 'nli') {
    const pairs = body.pairs ?? [];
    const results: ClassifyResult[] = [];
    let tokens = 0;
    for (const [index, pair] of pairs.entries()) {
      results.push(toResult(index, NLI_LABELS, nliLogits(pair.premise, pair.hypothesis), body.multi_label));
      tokens += countWordTokens(pair.premise) + countWordTokens(pair.hypothesis);
      yield;
    }
    return { results, method: NLI_METHOD, usage: { prompt_tokens: tokens, total_tokens: tokens, units: pairs.length } };
  }
  const inputs = typeof body.inputs === 'string' ? [body.inputs] : (body.inputs ?? []);
  const scorer = scorerFor(body.task, body.labels);
  const results: ClassifyResult[] = [];
  let tokens = 0;
  for (const [index, text] of inputs.entries()) {
    results.push(toResult(index, scorer.labels, scorer.logits(text), body.multi_label));
    tokens += countWordTokens(text);
    yield;
  }
  return { results, method: scorer.method, usage: { prompt_tokens: tokens, total_tokens: tokens, units: inputs.length } };
}
