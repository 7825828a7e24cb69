import { z } from 'zod';
import { Scope } from '@svc/schemas';
import { integer, secret } from '../../env-values.ts';

/** OAuth lifetimes and limits, developer keys, receipt keys and the demo principal. */
export const identityConfigFrom = z
  .object({
    SVC_SIGNING_SECRET: secret(32).optional(),
    SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS: integer(60, 86_400, 'seconds').default(3600),
    SVC_OAUTH_REFRESH_TOKEN_TTL_SECONDS: integer(300, 31_536_000, 'seconds').default(2_592_000),
    SVC_OAUTH_CODE_TTL_SECONDS: integer(1, 600, 'seconds').default(60),
    SVC_OAUTH_TOKEN_RATE_PER_MINUTE: integer(1, 100_000, 'requests per minute').default(60),
    SVC_OAUTH_REGISTER_RATE_PER_MINUTE: integer(1, 100_000, 'registrations per minute').default(20),
    SVC_DEVELOPER_KEYS_MAX_ACTIVE: integer(1, 1000, 'a key count').default(20),
    SVC_CREDENTIAL_CACHE_TTL_MS: integer(0, 999, 'milliseconds').default(750),
    SVC_CREDENTIAL_CACHE_MAX_ENTRIES: integer(1, 1_000_000, 'an entry count').default(10_000),
    SVC_KEY_USAGE_FLUSH_MS: integer(10, 60_000, 'milliseconds').default(500),
    SVC_KEY_USAGE_FLUSH_CALLS: integer(1, 100_000, 'a call count').default(1000),
    SVC_RECEIPT_KEY_GENERATION: integer(1, 1_000_000, 'a key generation').default(1),
    SVC_DEMO_TOKEN: secret(8).optional(),
    SVC_DEMO_SCOPES: z
      .string()
      .default('models:read inference:invoke')
      .transform((value) => value.split(/[\s,]+/).filter(Boolean))
      .pipe(z.array(Scope, { error: 'expected scopes separated by spaces or commas' }).min(1)),
  })
  .transform((env) => ({
    /** Secret the OAuth signing keys derive from; replicas must share it. Absent: generated into the data directory. */
    signingSecret: env.SVC_SIGNING_SECRET,
    accessTokenTtlSeconds: env.SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.SVC_OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    codeTtlSeconds: env.SVC_OAUTH_CODE_TTL_SECONDS,
    /** Token-endpoint requests per client IP per minute (the demo tier's limit). */
    tokenRatePerMinute: env.SVC_OAUTH_TOKEN_RATE_PER_MINUTE,
    /** Client registrations per client IP per minute. */
    registerRatePerMinute: env.SVC_OAUTH_REGISTER_RATE_PER_MINUTE,
    maxActiveDeveloperKeys: env.SVC_DEVELOPER_KEYS_MAX_ACTIVE,
    /**
     * How long a verified key or access token is kept in memory at most (0: never kept). Changes
     * reach every replica by notification at once; this bounds a missed one, so it stays under 1 s.
     */
    credentialCacheTtlMs: env.SVC_CREDENTIAL_CACHE_TTL_MS,
    credentialCacheMaxEntries: env.SVC_CREDENTIAL_CACHE_MAX_ENTRIES,
    /** Keyed calls' usage counters are written every this many ms or calls, whichever comes first (and on a graceful stop). */
    keyUsageFlushMs: env.SVC_KEY_USAGE_FLUSH_MS,
    keyUsageFlushCalls: env.SVC_KEY_USAGE_FLUSH_CALLS,
    /**
     * Which receipt signing key (derived from the signing secret) signs new receipts. Raise it to
     * rotate: keys used before stay published, so their receipts stay verifiable.
     */
    receiptKeyGeneration: env.SVC_RECEIPT_KEY_GENERATION,
    /** A publishable credential for the shared demo principal; absent means no demo principal. */
    demoToken: env.SVC_DEMO_TOKEN,
    demoScopes: env.SVC_DEMO_SCOPES,
  }));

export type IdentityConfig = z.output<typeof identityConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** identity-config.ts's settings, read by the feature list's identity line. */
    identity: IdentityConfig;
  }
}
