import { batchJobRequestSchemaId, type BatchJob, type BatchJobResult, type JobItemOutcome, type JobOperation, type JobStatus } from '@svc/schemas';

/** A row of `svc_jobs` as read back. */
export interface JobRow {
  id: string;
  principal_id: string;
  principal_kind: string;
  operation: JobOperation;
  items: unknown[];
  item_count: number;
  status: JobStatus;
  attempts: number;
  max_attempts: number;
  outcomes: JobItemOutcome[];
  result_bytes: string | number;
  current_item: number | null;
  lease_owner: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  cancelled_at: Date | null;
  expires_at: Date | null;
}

/** Every column but the items and outcomes, which only the runner and the result read. */
export const JOB_SUMMARY_COLUMNS = `id, principal_id, principal_kind, operation, item_count, status, attempts, max_attempts, current_item, lease_owner,
  error_code, error_message, created_at, started_at, finished_at, cancelled_at, expires_at,
  (SELECT coalesce(jsonb_agg(jsonb_build_object('index', o->'index', 'status', o->'status', 'code', o->'error'->'code')), '[]'::jsonb) FROM jsonb_array_elements(outcomes) o) AS outcomes`;

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** The public view of a job. Items without an outcome are running (the current one) or pending. */
export function toBatchJob(row: JobRow): BatchJob {
  const byIndex = new Map<number, { status: string; code?: string | null }>();
  for (const outcome of row.outcomes as unknown as Array<{ index: number; status: string; code?: string | null }>) byIndex.set(outcome.index, outcome);
  const items = Array.from({ length: row.item_count }, (_, index) => {
    const outcome = byIndex.get(index);
    if (outcome)
      return outcome.status === 'failed'
        ? { index, status: 'failed' as const, error_code: outcome.code ?? 'internal_error' }
        : { index, status: 'succeeded' as const };
    return { index, status: row.status === 'running' && row.current_item === index ? ('running' as const) : ('pending' as const) };
  });
  return {
    object: 'job',
    job_id: row.id,
    schema: batchJobRequestSchemaId,
    operation: row.operation,
    status: row.status,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    cancelled_at: iso(row.cancelled_at),
    expires_at: iso(row.expires_at),
    progress: {
      total: row.item_count,
      succeeded: items.filter((item) => item.status === 'succeeded').length,
      failed: items.filter((item) => item.status === 'failed').length,
    },
    items,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? row.error_code } : null,
  };
}

export function toBatchJobResult(row: JobRow): BatchJobResult {
  return {
    object: 'job.result',
    job_id: row.id,
    operation: row.operation,
    status: row.status as 'completed' | 'failed',
    items: [...row.outcomes].sort((a, b) => a.index - b.index),
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? row.error_code } : null,
  };
}
