import { z } from 'zod';
import { jobLimits } from '@svc/schemas';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * Batch job settings. Defaults are the spec's limits (section 8); tests lower them to reach the
 * edges quickly. `max_items` and `max_request_bytes` are the contract's (schema and body cap).
 */
export const jobsEnvShape = {
  SVC_JOBS_WORKERS: int(0, 64).default(2),
  SVC_JOBS_LEASE_SECONDS: int(1, 3600).default(30),
  SVC_JOBS_POLL_INTERVAL_MS: int(10, 60_000).default(250),
  SVC_JOBS_MAX_RESULT_BYTES: int(1, 1024 ** 3).default(jobLimits.maxResultBytes),
  SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: int(1, 1_000_000).default(jobLimits.maxActivePerPrincipal),
  SVC_JOBS_MAX_ACTIVE_GLOBAL: int(1, 1_000_000).default(jobLimits.maxActiveGlobal),
  SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: int(1, 1_000_000).default(jobLimits.maxActiveItemsPerPrincipal),
  SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL: int(1, 1_000_000).default(jobLimits.maxActiveItemsGlobal),
  SVC_JOBS_MAX_ATTEMPTS: int(1, 100).default(jobLimits.maxAttempts),
  SVC_JOBS_RESULT_TTL_SECONDS: int(1, 30 * 86_400).default(jobLimits.resultTtlSeconds),
  SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: int(1, 1_000_000).default(jobLimits.maxRetainedPerPrincipal),
  SVC_JOBS_MAX_RETAINED_GLOBAL: int(1, 1_000_000).default(jobLimits.maxRetainedGlobal),
  SVC_JOBS_HOUSEKEEPING_INTERVAL_MS: int(100, 3_600_000).default(60_000),
  SVC_IDEMPOTENCY_TTL_SECONDS: int(jobLimits.idempotencyKeyTtlSeconds, 30 * 86_400).default(jobLimits.idempotencyKeyTtlSeconds),
};

export interface JobsConfig {
  /** Jobs one server process runs at once (0: this process only admits, never runs). */
  workers: number;
  leaseSeconds: number;
  /** How often an idle worker looks for jobs other replicas queued. */
  pollIntervalMs: number;
  maxResultBytes: number;
  maxActivePerPrincipal: number;
  maxActiveGlobal: number;
  maxActiveItemsPerPrincipal: number;
  maxActiveItemsGlobal: number;
  maxAttempts: number;
  resultTtlSeconds: number;
  maxRetainedPerPrincipal: number;
  maxRetainedGlobal: number;
  housekeepingIntervalMs: number;
  idempotencyTtlSeconds: number;
}

type JobsEnv = { [K in keyof typeof jobsEnvShape]: z.output<(typeof jobsEnvShape)[K]> };

export function toJobsConfig(env: JobsEnv): JobsConfig {
  return {
    workers: env.SVC_JOBS_WORKERS,
    leaseSeconds: env.SVC_JOBS_LEASE_SECONDS,
    pollIntervalMs: env.SVC_JOBS_POLL_INTERVAL_MS,
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
  };
}
