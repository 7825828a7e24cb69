import { z } from 'zod';
import { jobLimits } from '@svc/schemas';
import { backstopDefaultMs } from '../../db/backstop.ts';
import { integer } from '../../env-values.ts';

const count = integer(1, 1_000_000, 'a count');

/**
 * Batch job workers, leases, caps and retention. Defaults are the spec's limits (section 8); tests
 * lower them to reach the edges quickly. `max_items` and `max_request_bytes` are the contract's
 * (schema and body cap).
 */
export const jobsConfigFrom = z
  .object({
    SVC_JOBS_WORKERS: integer(0, 64, 'a worker count').default(2),
    SVC_JOBS_LEASE_SECONDS: integer(1, 3600, 'seconds').default(30),
    // Unset: backstopDefaultMs, by where the database is.
    SVC_JOBS_POLL_INTERVAL_MS: integer(10, 600_000, 'milliseconds').optional(),
    DATABASE_URL: z.string().optional(),
    SVC_JOBS_MAX_RESULT_BYTES: integer(1, 1024 ** 3, 'bytes').default(jobLimits.maxResultBytes),
    SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: count.default(jobLimits.maxActivePerPrincipal),
    SVC_JOBS_MAX_ACTIVE_GLOBAL: count.default(jobLimits.maxActiveGlobal),
    SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: count.default(jobLimits.maxActiveItemsPerPrincipal),
    SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL: count.default(jobLimits.maxActiveItemsGlobal),
    SVC_JOBS_MAX_ATTEMPTS: integer(1, 100, 'an attempt count').default(jobLimits.maxAttempts),
    SVC_JOBS_RESULT_TTL_SECONDS: integer(1, 30 * 86_400, 'seconds').default(jobLimits.resultTtlSeconds),
    SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: count.default(jobLimits.maxRetainedPerPrincipal),
    SVC_JOBS_MAX_RETAINED_GLOBAL: count.default(jobLimits.maxRetainedGlobal),
    SVC_JOBS_HOUSEKEEPING_INTERVAL_MS: integer(100, 3_600_000, 'milliseconds').default(60_000),
    SVC_IDEMPOTENCY_TTL_SECONDS: integer(jobLimits.idempotencyKeyTtlSeconds, 30 * 86_400, 'seconds').default(jobLimits.idempotencyKeyTtlSeconds),
  })
  .transform((env) => ({
    /** Jobs one server process runs at once (0: this process only admits, never runs). */
    workers: env.SVC_JOBS_WORKERS,
    leaseSeconds: env.SVC_JOBS_LEASE_SECONDS,
    /**
     * The backstop poll: a submission wakes every replica's workers (LISTEN/NOTIFY), so an idle
     * worker looks on its own only this often, for a job whose runner died (its lease ran out).
     */
    pollIntervalMs: env.SVC_JOBS_POLL_INTERVAL_MS ?? backstopDefaultMs(env.DATABASE_URL),
    maxResultBytes: env.SVC_JOBS_MAX_RESULT_BYTES,
    maxActivePerPrincipal: env.SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL,
    maxActiveGlobal: env.SVC_JOBS_MAX_ACTIVE_GLOBAL,
    maxActiveItemsPerPrincipal: env.SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL,
    maxActiveItemsGlobal: env.SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL,
    maxAttempts: env.SVC_JOBS_MAX_ATTEMPTS,
    resultTtlSeconds: env.SVC_JOBS_RESULT_TTL_SECONDS,
    maxRetainedPerPrincipal: env.SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL,
    maxRetainedGlobal: env.SVC_JOBS_MAX_RETAINED_GLOBAL,
    housekeepingIntervalMs: env.SVC_JOBS_HOUSEKEEPING_INTERVAL_MS,
    idempotencyTtlSeconds: env.SVC_IDEMPOTENCY_TTL_SECONDS,
  }));

export type JobsConfig = z.output<typeof jobsConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** jobs-config.ts's settings, read by the feature list's jobs line. */
    jobs: JobsConfig;
  }
}
