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

/**
 * A model as `/v1/models` lists it: OpenAI's Model object (`id`, `object`, `created`, `owned_by`,
 * so OpenAI clients read it as theirs) with svc's own fields beside it.
 */
export const ModelInfo = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Unix seconds, fixed per model and the same on every replica: the release of the built-in engine for its models; 0 (not known to svc) for upstream models.',
      ),
    owned_by: z.string().describe('`svc` for the built-in models; the id of the upstream that serves the model otherwise.'),
    engine: z.string(),
    tasks: z.array(z.string()),
    label: z.string(),
    description: z.string(),
    dimensions: z.number().int().positive().optional(),
    method: z.enum(['neural', 'classical']).optional().describe('A neural model, or a classical method with no model weights.'),
    fallbacks: z.array(z.string()).optional().describe("Models tried in order when this one's upstream fails before its first byte."),
    default_for: z
      .array(z.string())
      .optional()
      .describe(
        "Operations that use this model when a request names none. `responses`: the operator's declared Responses default (passed through), else chat's default (translated), the model that serves a Responses request naming none.",
      ),
  })
  .meta({ id: 'ModelInfo' });

export type ModelInfo = z.infer<typeof ModelInfo>;

export const ModelsResponse = z.object({ object: z.literal('list'), engines: z.array(EngineInfo), data: z.array(ModelInfo) }).meta({ id: 'ModelsResponse' });
export type ModelsResponse = z.infer<typeof ModelsResponse>;

export const CacheInfo = z
  .object({
    name: z.string(),
    description: z.string(),
    view: z
      .enum(['server', 'principal'])
      .optional()
      .describe(
        "`server`: the numbers of the whole server (the operator's view). `principal`: only the caller's own share of a cache kept per principal (every other caller's view): " +
          'its live entries and their bytes, and the hits and misses of its own lookups.',
      ),
    entries: z.number().int().nonnegative(),
    max_entries: z.number().int().nonnegative(),
    hits: z.number().int().nonnegative(),
    misses: z.number().int().nonnegative(),
    hit_rate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .optional()
      .describe('hits / (hits + misses), counted by the process that answers; null before the first lookup.'),
    bytes: z.number().int().nonnegative().optional().describe('Bytes of the answers held, where the cache knows them (the response cache).'),
    ttl_seconds: z.number().int().positive().optional().describe('How long an entry is served after it was stored, where entries expire (the response cache).'),
    shared: z
      .boolean()
      .optional()
      .describe('True when the entries live in the database and every replica reads them; the counts of hits and misses are still per process.'),
    workers: z
      .object({
        threads: z.number().int().nonnegative().describe('Worker threads alive (0 before the first job: the pool starts on first use).'),
        starting: z
          .number()
          .int()
          .nonnegative()
          .describe('Workers starting: a thread loading its module, or loading its engine, under the worker start deadline.'),
        busy: z.number().int().nonnegative().describe('Jobs a worker is running.'),
        waiting: z.number().int().nonnegative().describe('Jobs admitted and waiting for a worker (a starting one, or a busy one under the queue deadline).'),
      })
      .optional()
      .describe(
        'Where the entry is a worker pool (`pdf-workers`): what its workers are doing now. A 503 `pdf_queue_timeout` means every worker was busy; `pdf_worker_unavailable`, that none started.',
      ),
  })
  .meta({ id: 'CacheInfo' });

export const CacheResponse = z.object({ caches: z.array(CacheInfo) }).meta({ id: 'CacheResponse' });
export type CacheResponse = z.infer<typeof CacheResponse>;
