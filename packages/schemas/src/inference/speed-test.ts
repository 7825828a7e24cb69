import { z } from 'zod';

export const SpeedTestResponse = z
  .object({
    workload: z.string().describe('The fixed workload, in words: the same on every call.'),
    results: z.array(
      z.object({
        engine: z.string(),
        model: z.string(),
        operation: z.string(),
        items: z.number().int().nonnegative(),
        elapsed_ms: z.number().nonnegative(),
        items_per_second: z.number().nonnegative(),
        ok: z.boolean(),
        error: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'SpeedTestResponse' });
export type SpeedTestResponse = z.infer<typeof SpeedTestResponse>;
