import { z } from 'zod';

export const EngineInfo = z
  .object({
    id: z.string(),
    kind: z.enum(['builtin', 'openai-compatible']),
    label: z.string(),
    available: z.boolean(),
    description: z.string(),
  })
  .meta({ id: 'EngineInfo' });

export const ModelInfo = z
  .object({
    id: z.string(),
    engine: z.string(),
    tasks: z.array(z.string()),
    label: z.string(),
    description: z.string(),
    dimensions: z.number().int().positive().optional(),
  })
  .meta({ id: 'ModelInfo' });

export const ModelsResponse = z
  .object({ object: z.literal('list'), engines: z.array(EngineInfo), data: z.array(ModelInfo) })
  .meta({ id: 'ModelsResponse' });
export type ModelsResponse = z.infer<typeof ModelsResponse>;

export const CacheInfo = z
  .object({
    name: z.string(),
    description: z.string(),
    entries: z.number().int().nonnegative(),
    max_entries: z.number().int().nonnegative(),
    hits: z.number().int().nonnegative(),
    misses: z.number().int().nonnegative(),
  })
  .meta({ id: 'CacheInfo' });

export const CacheResponse = z.object({ caches: z.array(CacheInfo) }).meta({ id: 'CacheResponse' });
export type CacheResponse = z.infer<typeof CacheResponse>;
