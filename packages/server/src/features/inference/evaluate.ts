import { ClassifyRequest, type EvalMetric, type EvalResponse, type EvalRequest, type InferenceUsage } from '@svc/schemas';
import type { z } from 'zod';
import { corpusBleu, itemMetrics } from '../../inference/eval-metrics.ts';
import type { InvocationContext, InvokeDeps } from './invoke-model.ts';
import { runClassify, runSummarize } from './operations.ts';

type EvalBody = z.output<typeof EvalRequest>;

/** Runs the model first when asked (classification labels or summaries), one call for all inputs where the operation allows. */
async function makePredictions(deps: InvokeDeps, run: NonNullable<EvalBody['run']>, call: InvocationContext): Promise<{ predictions: string[]; model: string; usage: InferenceUsage }> {
  if (run.operation === 'classify') {
    // The classify body goes through the classify route's own schema: its defaults, and its rules for each task.
    const answer = await runClassify(deps, ClassifyRequest.parse({ task: run.task ?? 'other', inputs: run.inputs, labels: run.labels, model: run.model }), call);
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

export async function evaluate(deps: InvokeDeps, body: EvalBody, call: InvocationContext): Promise<EvalResponse> {
  const made = body.run ? await makePredictions(deps, body.run, call) : undefined;
  const predictions = made?.predictions ?? body.predictions!;
  const metrics = [...new Set(body.metrics)] as EvalMetric[];
  const items = predictions.map((prediction, index) => ({
    index,
    prediction,
    scores: Object.fromEntries(metrics.map((metric) => [metric, itemMetrics[metric](prediction, body.references[index]!)])),
  }));
  const mean = (metric: EvalMetric) => items.reduce((sum, item) => sum + item.scores[metric]!, 0) / items.length;
  return {
    metrics: Object.fromEntries(metrics.map((metric) => [metric, metric === 'bleu' ? corpusBleu(predictions, body.references) : mean(metric)])),
    items,
    model: made?.model ?? null,
    usage: made?.usage ?? { prompt_tokens: 0, total_tokens: 0, units: items.length },
  };
}
