import { sqlMigration } from './types.ts';

/**
 * Batch jobs and the idempotency store. `svc_idempotency_keys` is the one table every route that
 * takes an Idempotency-Key uses (jobs now, billing later): the first response is stored and
 * replayed. `svc_jobs` is the queue: claimed with FOR UPDATE SKIP LOCKED, held by a lease.
 */
export default sqlMigration(
  '20261122T1900-jobs',
  [
    `CREATE TABLE IF NOT EXISTS svc_idempotency_keys (
       principal_id text NOT NULL,
       route_id text NOT NULL,
       idempotency_key text NOT NULL,
       fingerprint text NOT NULL,
       state text NOT NULL,
       owner_token text,
       locked_until timestamptz,
       response_status integer,
       response_body jsonb,
       response_headers jsonb,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL,
       PRIMARY KEY (principal_id, route_id, idempotency_key)
     )`,
    `CREATE INDEX IF NOT EXISTS svc_idempotency_keys_expiry ON svc_idempotency_keys (expires_at)`,
    `CREATE TABLE IF NOT EXISTS svc_jobs (
       id text PRIMARY KEY,
       principal_id text NOT NULL,
       principal_kind text NOT NULL,
       operation text NOT NULL,
       items jsonb NOT NULL,
       item_count integer NOT NULL,
       status text NOT NULL,
       attempts integer NOT NULL DEFAULT 0,
       max_attempts integer NOT NULL,
       outcomes jsonb NOT NULL DEFAULT '[]'::jsonb,
       result_bytes bigint NOT NULL DEFAULT 0,
       current_item integer,
       lease_owner text,
       lease_expires_at timestamptz,
       error_code text,
       error_message text,
       created_at timestamptz NOT NULL DEFAULT now(),
       started_at timestamptz,
       finished_at timestamptz,
       cancelled_at timestamptz,
       expires_at timestamptz
     )`,
    `CREATE INDEX IF NOT EXISTS svc_jobs_queued ON svc_jobs (created_at, id) WHERE status = 'queued'`,
    `CREATE INDEX IF NOT EXISTS svc_jobs_leases ON svc_jobs (lease_expires_at) WHERE status = 'running'`,
    `CREATE INDEX IF NOT EXISTS svc_jobs_active ON svc_jobs (principal_id) WHERE status IN ('queued', 'running')`,
    `CREATE INDEX IF NOT EXISTS svc_jobs_finished ON svc_jobs (principal_id, finished_at DESC, id DESC) WHERE finished_at IS NOT NULL`,
  ],
  ['DROP TABLE IF EXISTS svc_jobs', 'DROP TABLE IF EXISTS svc_idempotency_keys'],
);
