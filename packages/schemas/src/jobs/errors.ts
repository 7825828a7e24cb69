import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the jobs feature raises (docs/jobs.md); the root merges them into `errorCodes`. */
export const jobsErrors = {
  /** A validate_json or calculate item whose worker thread did not start and load its library within 30 s (a machine under heavy load); retry the item. */
  job_worker_unavailable: 503,
  job_not_found: 404,
  /** `job_not_cancellable:<status>`: only queued jobs can be cancelled. */
  job_not_cancellable: 409,
  /** `job_not_finished:<status>`: the result exists once the job completed or failed. */
  job_not_finished: 409,
  job_cancelled: 409,
  /** `jobs_active_limit:<which>`: principal_jobs, principal_items, global_jobs or global_items. */
  jobs_active_limit: 429,
  /** A job's error (not an HTTP answer): its results would pass max_result_bytes. */
  job_result_too_large: 413,
  /** A job's error: its runner died (lease expired) on every allowed attempt. */
  job_attempts_exhausted: 503,
  /** An item's error: the expression is not arithmetic over numbers and the allowed functions. */
  calculate_invalid: 422,
  calculate_not_finite: 422,
  /** An item's error: calculate passed its deadline or memory cap in its worker thread. */
  calculate_too_costly: 422,
  /** An item's error: the JSON Schema itself does not compile (RE2 refusing a pattern included). */
  json_schema_invalid: 422,
  /** An item's error: validate_json passed its deadline or memory cap in its worker thread. */
  json_validation_too_costly: 422,
} as const satisfies ErrorCodeTable;
