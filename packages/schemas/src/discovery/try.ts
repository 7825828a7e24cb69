import { z } from 'zod';
import { RerankResponse } from '../inference/rerank.ts';

/** The zero-credential activation proof: a fixed built-in operation, its result and timings, and what to do next. */
export const TryResponse = z
  .object({
    service: z.literal('svc'),
    version: z.string(),
    operation: z.object({
      path: z.literal('/v1/rerank'),
      description: z.string(),
      request: z.object({ query: z.string(), documents: z.array(z.string()) }).describe('The fixed request: the same on every call.'),
      response: RerankResponse,
    }),
    timings_ms: z.object({ engine: z.number().nonnegative(), total: z.number().nonnegative() }),
    credential: z.object({ how: z.string(), register: z.string(), token: z.string(), scopes: z.array(z.string()) }),
    next: z.array(z.object({ method: z.string(), url: z.string(), why: z.string() })),
  })
  .meta({ id: 'TryResponse' });
export type TryResponse = z.infer<typeof TryResponse>;

/** Calls of /v1/try a minute per address. */
export const TRY_CALLS_PER_MINUTE = 30;
