import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy } from './usage.ts';

const inputText = z.string().max(limits.embeddingsMaxInputChars, `an input holds at most ${limits.embeddingsMaxInputChars} characters`);

/** The OpenAI embeddings request. Token-array inputs are refused: svc embeds text. */
export const EmbeddingsRequest = z
  .strictObject({
    input: z.union([
      inputText,
      z.array(inputText).min(1, 'send at least one input').max(limits.embeddingsMaxInputs, `at most ${limits.embeddingsMaxInputs} inputs`),
    ]),
    model: optionalModel,
    encoding_format: z
      .enum(['float', 'base64'])
      .default('float')
      .describe('`base64`: each vector as little-endian float32 bytes, base64 (what the openai client asks for by default).'),
    dimensions: z
      .number()
      .int()
      .min(1)
      .max(8192)
      .optional()
      .describe('Fewer dimensions, where the model allows it (the built-in model: 1..512, truncated and renormalised).'),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'EmbeddingsRequest' });
export type EmbeddingsRequest = z.input<typeof EmbeddingsRequest>;

export const EmbeddingsResponse = z
  .object({
    object: z.literal('list'),
    data: z.array(z.object({ object: z.literal('embedding'), index: z.number().int().nonnegative(), embedding: z.union([z.array(z.number()), z.string()]) })),
    model: z.string(),
    usage: InferenceUsage,
    svc: ServedBy.optional(),
  })
  .meta({ id: 'EmbeddingsResponse' });
export type EmbeddingsResponse = z.infer<typeof EmbeddingsResponse>;
