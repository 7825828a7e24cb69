import { z } from 'zod';

/**
 * What one call used, on every inference answer. `prompt_tokens`/`completion_tokens` follow
 * OpenAI's names; the built-in engine counts word tokens (its tokenizer), an upstream reports
 * its own. `units` is what a non-token operation counts (documents reranked, texts classified).
 */
export const InferenceUsage = z
  .object({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative().optional(),
    total_tokens: z.number().int().nonnegative(),
    units: z.number().int().nonnegative().optional().describe('Items the operation worked on (documents reranked, texts classified, items scored).'),
  })
  .meta({ id: 'InferenceUsage' });
export type InferenceUsage = z.infer<typeof InferenceUsage>;

/** Which engine and model served an answer, and whether it is a neural model or a classical method. */
export const ServedBy = z
  .object({
    engine: z.string(),
    model: z.string(),
    method: z.enum(['neural', 'classical']),
  })
  .meta({ id: 'ServedBy' });
export type ServedBy = z.infer<typeof ServedBy>;

/** The error member of a stream event or chunk: a stable code and a human message. */
export const StreamErrorMember = z.object({ code: z.string(), message: z.string() }).meta({ id: 'StreamErrorMember' });

export const optionalModel = z.string().min(1).max(256).optional().describe('A model id from /v1/models; absent means the configured default for this operation.');
