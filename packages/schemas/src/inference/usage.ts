import { z } from 'zod';

const tokenCount = z.number().int().nonnegative().optional();

/**
 * OpenAI's breakdown of the prompt's tokens, as an upstream reports it. The fields OpenAI sends
 * today are named; others an upstream adds (counts, all of them) are kept as sent.
 */
export const PromptTokensDetails = z.looseObject({ cached_tokens: tokenCount, audio_tokens: tokenCount }).meta({ id: 'PromptTokensDetails' });

/** OpenAI's breakdown of the completion's tokens (reasoning, audio, predicted output), as an upstream reports it. */
export const CompletionTokensDetails = z
  .looseObject({ reasoning_tokens: tokenCount, audio_tokens: tokenCount, accepted_prediction_tokens: tokenCount, rejected_prediction_tokens: tokenCount })
  .meta({ id: 'CompletionTokensDetails' });

/**
 * What one call used, on every inference answer. `prompt_tokens`/`completion_tokens` follow
 * OpenAI's names; the built-in engine counts word tokens (its tokenizer), an upstream reports
 * its own, with its token details when it sends them. `units` is what a non-token operation
 * counts (documents reranked, texts classified).
 */
export const InferenceUsage = z
  .object({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative().optional(),
    total_tokens: z.number().int().nonnegative(),
    prompt_tokens_details: PromptTokensDetails.optional().describe(
      "The upstream's breakdown of the prompt tokens (cached, audio), passed through as it reported it.",
    ),
    completion_tokens_details: CompletionTokensDetails.optional().describe(
      "The upstream's breakdown of the completion tokens (reasoning, audio, predictions), passed through as it reported it.",
    ),
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

export const optionalModel = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe('A model id from /v1/models; absent means the configured default for this operation.');
