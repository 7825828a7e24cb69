import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy, StreamErrorMember } from './usage.ts';

export const SummarizeRequest = z
  .strictObject({
    text: z.string().min(1).max(limits.summarizeMaxChars, `the text holds at most ${limits.summarizeMaxChars} characters`),
    max_sentences: z.number().int().min(1).max(limits.summarizeMaxSentences).default(3),
    model: optionalModel,
    stream: z
      .boolean()
      .default(false)
      .describe('Answer a server-sent event stream: `sentence-selected` per sentence, then `summary-completed` with the usage.'),
  })
  .meta({ id: 'SummarizeRequest' });
export type SummarizeRequest = z.input<typeof SummarizeRequest>;

/** A sentence of the summary and where it stands in the text (UTF-16 offsets, end exclusive). */
export const SummarySentence = z
  .object({ text: z.string(), start: z.number().int().nonnegative(), end: z.number().int().nonnegative(), score: z.number() })
  .meta({ id: 'SummarySentence' });
export type SummarySentence = z.infer<typeof SummarySentence>;

export const SummarizeResponse = z
  .object({
    summary: z.string(),
    sentences: z.array(SummarySentence).describe('Extractive engines: the chosen sentences in text order. Generative engines: empty.'),
    extractive: z.boolean(),
    model: z.string(),
    usage: InferenceUsage,
    svc: ServedBy.optional(),
  })
  .meta({ id: 'SummarizeResponse' });
export type SummarizeResponse = z.infer<typeof SummarizeResponse>;

export const summarizeStreamEventNames = { sentence: 'sentence-selected', completed: 'summary-completed', error: 'error' } as const;
export const SummarizeStreamEvent = z.union([SummarySentence, SummarizeResponse, StreamErrorMember]).meta({ id: 'SummarizeStreamEvent' });
