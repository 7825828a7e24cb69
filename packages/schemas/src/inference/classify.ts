import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy } from './usage.ts';

/** The blackboard's canonical classification tasks (embeddings and rerank have their own routes). */
export const ClassifyTask = z.enum(['sentiment', 'toxicity', 'prompt_injection', 'tickets', 'nli', 'other']).meta({ id: 'ClassifyTask' });
export type ClassifyTask = z.infer<typeof ClassifyTask>;

const text = z.string().max(limits.classifyMaxTextChars, `a text holds at most ${limits.classifyMaxTextChars} characters`);

export const ClassifyRequest = z
  .strictObject({
    task: ClassifyTask.default('other').describe('`other` needs `labels`; `nli` needs `pairs`; every other task needs `inputs`.'),
    inputs: z.union([text, z.array(text).min(1).max(limits.classifyMaxTexts, `at most ${limits.classifyMaxTexts} texts`)]).optional(),
    pairs: z
      .array(z.strictObject({ premise: text, hypothesis: text }))
      .min(1)
      .max(limits.classifyMaxTexts, `at most ${limits.classifyMaxTexts} pairs`)
      .optional()
      .describe('Premise and hypothesis pairs, for `nli`.'),
    labels: z
      .array(z.string().min(1).max(256))
      .min(2, 'give at least two labels')
      .max(limits.classifyMaxLabels, `at most ${limits.classifyMaxLabels} labels`)
      .optional()
      .describe(
        "Explicit labels: required for `other`, and they replace the task's own labels for the others (except nli). On the built-in engine, labels that are all among the task's own " +
          '(sentiment with `["positive", "negative"]`) keep the task\'s method restricted to them; any other labels are scored by similarity of the text to each label, and `method` says so.',
      ),
    multi_label: z.boolean().default(false).describe('Score each label on its own (scores need not sum to 1).'),
    model: optionalModel,
  })
  .superRefine((body, context) => {
    if (body.task === 'nli') {
      if (!body.pairs) context.addIssue({ code: 'custom', path: ['pairs'], message: 'the nli task classifies premise and hypothesis pairs: send `pairs`' });
      if (body.inputs !== undefined) context.addIssue({ code: 'custom', path: ['inputs'], message: 'the nli task takes `pairs`, not `inputs`' });
      return;
    }
    if (body.inputs === undefined) context.addIssue({ code: 'custom', path: ['inputs'], message: 'send `inputs`: a text or a list of texts' });
    if (body.pairs !== undefined) context.addIssue({ code: 'custom', path: ['pairs'], message: '`pairs` is for the nli task only' });
    if (body.task === 'other' && !body.labels) context.addIssue({ code: 'custom', path: ['labels'], message: 'the `other` task needs explicit `labels`' });
  })
  .meta({ id: 'ClassifyRequest' });
export type ClassifyRequest = z.input<typeof ClassifyRequest>;
export type ClassifyBody = z.output<typeof ClassifyRequest>;

export const LabelScore = z.object({ label: z.string(), score: z.number().min(0).max(1) }).meta({ id: 'LabelScore' });

export const ClassifyResponse = z
  .object({
    task: ClassifyTask,
    model: z.string(),
    results: z.array(
      z.object({
        index: z.number().int().nonnegative(),
        label: z.string(),
        score: z.number().min(0).max(1),
        confidence: z
          .enum(['low', 'medium', 'high'])
          .describe(
            'How far the top label stands from the runner-up: `high` when its score leads by at least 0.4, `medium` by at least 0.15, else `low` (treat the label as a guess).',
          ),
        scores: z.array(LabelScore).describe('Every label, best first.'),
      }),
    ),
    method: z.string().describe('The method behind the scores, in words (a lexicon, naive Bayes, a neural model, ...).'),
    usage: InferenceUsage,
    svc: ServedBy.optional(),
  })
  .meta({ id: 'ClassifyResponse' });
export type ClassifyResponse = z.infer<typeof ClassifyResponse>;
