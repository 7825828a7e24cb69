import { ClassifyRequest, inferenceLimits, type EvalMetric, type EvalResponse, type EvalRequest, type InferenceUsage } from '@svc/schemas';
import type { z } from 'zod';
import { ServiceError } from '../../service-error.ts';
import {
  bleuFrom,
  bleuStatsOfTokens,
  corpusBleuOfStats,
  countRougeTokens,
  exactMatch,
  labelAccuracy,
  rougeLOfTokens,
  rougeTokens,
  tokenF1,
  type BleuStats,
} from '../../inference/eval-metrics.ts';
import { lcsWordSteps } from '../../inference/lcs-length.ts';
import { runInSlices, type Steps } from '../../bounded/work-in-slices.ts';
import type { InvocationContext, InvokeDeps } from './invoke-model.ts';
import { runClassify, runSummarize } from './operations.ts';

type EvalBody = z.output<typeof EvalRequest>;

/** Runs the model first when asked (classification labels or summaries), one call for all inputs where the operation allows. */
async function makePredictions(
  deps: InvokeDeps,
  run: NonNullable<EvalBody['run']>,
  call: InvocationContext,
): Promise<{ predictions: string[]; model: string; usage: InferenceUsage }> {
  if (run.operation === 'classify') {
    // The classify body goes through the classify route's own schema: its defaults, and its rules for each task.
    const answer = await runClassify(
      deps,
      ClassifyRequest.parse({ task: run.task ?? 'other', inputs: run.inputs, labels: run.labels, model: run.model }),
      call,
    );
    return { predictions: answer.results.map((result) => result.label), model: answer.model, usage: answer.usage };
  }
  const usage: InferenceUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units: 0 };
  const predictions: string[] = [];
  let model = '';
  for (const text of run.inputs) {
    const answer = await runSummarize(deps, { text, max_sentences: 3, model: run.model, stream: false }, call);
    predictions.push(answer.summary);
    model = answer.model;
    usage.prompt_tokens += answer.usage.prompt_tokens;
    usage.completion_tokens! += answer.usage.completion_tokens ?? 0;
    usage.total_tokens += answer.usage.total_tokens;
    usage.units! += 1;
  }
  return { predictions, model, usage };
}

/**
 * Scores every item. A 4 MiB body of short tokens is seconds of (linear) work, so it runs in
 * slices between turns of the event loop; ROUGE-L, the one metric that is not linear, is priced
 * first from the token counts and refused past its budget, before any of it runs.
 */
function* scoreAll(
  predictions: readonly string[],
  references: readonly string[],
  metrics: readonly EvalMetric[],
): Steps<Pick<EvalResponse, 'metrics' | 'items'>> {
  if (metrics.includes('rouge_l')) {
    // Priced from counts alone: the tokens of one item are built when that item is scored.
    let work = 0;
    for (const [index, prediction] of predictions.entries()) {
      work += lcsWordSteps(countRougeTokens(prediction), countRougeTokens(references[index]!));
      yield;
    }
    if (metrics.includes('rouge_l') && work > inferenceLimits.evalMaxRougeLWordSteps) {
      throw new ServiceError(
        'eval_work_too_large',
        `ROUGE-L over these items would take ${work} word steps (the sum over items of the longer side's tokens times the shorter's / 32); a request may take ${inferenceLimits.evalMaxRougeLWordSteps}. Send the items in smaller requests.`,
      );
    }
  }
  const bleuStats: BleuStats[] = [];
  const items: EvalResponse['items'] = [];
  for (const [index, prediction] of predictions.entries()) {
    const reference = references[index]!;
    const scores: Record<string, number> = {};
    const tokens =
      metrics.includes('rouge_l') || metrics.includes('bleu') ? { predicted: rougeTokens(prediction), expected: rougeTokens(reference) } : undefined;
    for (const metric of metrics) {
      if (metric === 'exact_match') scores[metric] = exactMatch(prediction, reference);
      else if (metric === 'token_f1') scores[metric] = tokenF1(prediction, reference);
      else if (metric === 'accuracy') scores[metric] = labelAccuracy(prediction, reference);
      else if (metric === 'rouge_l') scores[metric] = yield* rougeLOfTokens(tokens!.predicted, tokens!.expected);
      else {
        const stats = bleuStatsOfTokens(tokens!.predicted, tokens!.expected);
        bleuStats.push(stats);
        scores[metric] = bleuFrom(stats);
      }
    }
    items.push({ index, prediction, scores });
    yield;
  }
  const mean = (metric: EvalMetric) => items.reduce((sum, item) => sum + item.scores[metric]!, 0) / items.length;
  return { metrics: Object.fromEntries(metrics.map((metric) => [metric, metric === 'bleu' ? corpusBleuOfStats(bleuStats) : mean(metric)])), items };
}

export async function evaluate(deps: InvokeDeps, body: EvalBody, call: InvocationContext): Promise<EvalResponse> {
  const made = body.run ? await makePredictions(deps, body.run, call) : undefined;
  const predictions = made?.predictions ?? body.predictions!;
  const metrics = [...new Set(body.metrics)] as EvalMetric[];
  const scored = await runInSlices(scoreAll(predictions, body.references, metrics), call.signal);
  return {
    ...scored,
    model: made?.model ?? null,
    usage: made?.usage ?? { prompt_tokens: 0, total_tokens: 0, units: scored.items.length },
  };
}
