import { z } from 'zod';
import { flag, integer } from '../../env-values.ts';

const MIB = 1024 * 1024;

/**
 * The response cache's settings (docs/inference.md, "Response cache"). The caps bound what the
 * database holds: the oldest entries go first once either is passed. An answer larger than
 * SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES is passed on but not stored, so one answer cannot empty the cache.
 * SVC_RESPONSE_CACHE_MEMORY_BYTES bounds the bodies each process also holds in memory (0: none),
 * which a hit sends without a read while their row's standing is trusted (on PostgreSQL
 * SVC_RESPONSE_CACHE_MEMORY_TRUST_MS after it was read, which a purge waits out), else after reading
 * only the row's standing.
 */
export const responseCacheConfigFrom = z
  .object({
    SVC_RESPONSE_CACHE: flag.default(true),
    SVC_RESPONSE_CACHE_TTL_SECONDS: integer(1, 30 * 86_400, 'seconds').default(3_600),
    SVC_RESPONSE_CACHE_MAX_ENTRIES: integer(1, 10_000_000, 'an entry count').default(100_000),
    SVC_RESPONSE_CACHE_MAX_BYTES: integer(1_024, 64 * 1_024 * MIB, 'bytes').default(512 * MIB),
    SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES: integer(1_024, 1_024 * MIB, 'bytes').default(8 * MIB),
    SVC_RESPONSE_CACHE_MEMORY_BYTES: integer(0, 64 * 1_024 * MIB, 'bytes').default(32 * MIB),
    SVC_RESPONSE_CACHE_MEMORY_TRUST_MS: integer(0, 10_000, 'milliseconds').default(1_000),
  })
  .refine((env) => env.SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES <= env.SVC_RESPONSE_CACHE_MAX_BYTES, {
    path: ['SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES'],
    error: 'expected at most SVC_RESPONSE_CACHE_MAX_BYTES',
  })
  .transform((env) => ({
    enabled: env.SVC_RESPONSE_CACHE,
    ttlSeconds: env.SVC_RESPONSE_CACHE_TTL_SECONDS,
    maxEntries: env.SVC_RESPONSE_CACHE_MAX_ENTRIES,
    maxBytes: env.SVC_RESPONSE_CACHE_MAX_BYTES,
    maxEntryBytes: env.SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES,
    memoryBytes: env.SVC_RESPONSE_CACHE_MEMORY_BYTES,
    memoryTrustMs: env.SVC_RESPONSE_CACHE_MEMORY_TRUST_MS,
  }));

export type ResponseCacheConfig = z.output<typeof responseCacheConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** response-cache-config.ts's settings, read by the feature list's responseCache line. */
    responseCache: ResponseCacheConfig;
  }
}
