import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { ClassifyTask } from './classify.ts';
import { InferenceUsage, optionalModel } from './usage.ts';

export const EvalMetric = z.enum(['exact_match', 'token_f1', 'rouge_l', 'bleu', 'accuracy']).meta({ id: 'EvalMetric' });
export type EvalMetric = z.infer<typeof EvalMetric>;

const item = z.string().max(limits.evalMaxItemChars, `an item holds at most ${limits.evalMaxItemChars} characters`);
const items = z.array(item).min(1).max(limits.evalMaxItems, `at most ${limits.evalMaxItems} items`);

/**
 * Scores predictions against references. Either send `predictions`, or ask svc to make them first
 * with `run` (a classification task or a summary over `inputs`), then score those.
 */
export const EvalRequest = z
  .strictObject({
    references: items,
    predictions: items.optional(),
    run: z
      .strictObject({
        operation: z.enum(['classify', 'summarize']),
        task: ClassifyTask.optional(),
        labels: z.array(z.string().min(1).max(256)).min(2).max(limits.classifyMaxLabels).optional(),
        inputs: items,
        model: optionalModel,
      })
      .optional(),
    metrics: z.array(EvalMetric).min(1).default(['exact_match', 'token_f1']),
  })
  .superRefine((body, context) => {
    if ((body.predictions === undefined) === (body.run === undefined))
      context.addIssue({ code: 'custom', path: ['predictions'], message: 'send exactly one of `predictions` and `run`' });
    if (body.run?.operation === 'classify') {
      if (body.run.task === 'nli')
        context.addIssue({
          code: 'custom',
          path: ['run', 'task'],
          message: 'eval runs a classification over `inputs`; nli classifies pairs, so score its predictions instead',
        });
      if ((body.run.task ?? 'other') === 'other' && !body.run.labels)
        context.addIssue({ code: 'custom', path: ['run', 'labels'], message: 'the `other` task needs explicit `labels`' });
    }
    const made = body.predictions ?? body.run?.inputs;
    if (made && made.length !== body.references.length)
      context.addIssue({
        code: 'custom',
        path: ['references'],
        message: `references (${body.references.length}) and predictions or inputs (${made.length}) must be as many`,
      });
  })
  .meta({ id: 'EvalRequest' });
export type EvalRequest = z.input<typeof EvalRequest>;

export const EvalResponse = z
  .object({
    metrics: z.record(z.string(), z.number()).describe('Each metric over all items, 0..1 (BLEU is corpus BLEU-4 with smoothing).'),
    items: z.array(z.object({ index: z.number().int().nonnegative(), prediction: z.string(), scores: z.record(z.string(), z.number()) })),
    model: z.string().nullable().describe('The model that made the predictions, when svc ran one.'),
    usage: InferenceUsage,
  })
  .meta({ id: 'EvalResponse' });
export type EvalResponse = z.infer<typeof EvalResponse>;
