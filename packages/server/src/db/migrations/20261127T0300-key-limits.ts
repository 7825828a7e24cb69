import { sqlMigration } from './types.ts';

/**
 * Limits per key and principal kind (docs/limits.md): a key's own limits, the requests in
 * flight (leases that a dead replica's requests outlive only until they expire), the
 * Idempotency-Keys already counted, the credits a key drew per day and month, and its usage
 * per day and model. Per-minute windows live in svc_rate_counters.
 */
export default sqlMigration(
  '20261127T0300-key-limits',
  [
    `ALTER TABLE svc_developer_keys ADD COLUMN IF NOT EXISTS limits jsonb NOT NULL DEFAULT '{}'::jsonb`,
    `CREATE TABLE IF NOT EXISTS svc_limit_leases (
       id text PRIMARY KEY,
       subject text NOT NULL,
       expires_at timestamptz NOT NULL
     )`,
    `CREATE INDEX IF NOT EXISTS svc_limit_leases_subject ON svc_limit_leases (subject, expires_at)`,
    `CREATE TABLE IF NOT EXISTS svc_limit_counted (
       subject text NOT NULL,
       idempotency_key text NOT NULL,
       expires_at timestamptz NOT NULL,
       PRIMARY KEY (subject, idempotency_key)
     )`,
    `CREATE INDEX IF NOT EXISTS svc_limit_counted_expiry ON svc_limit_counted (expires_at)`,
    `CREATE TABLE IF NOT EXISTS svc_limit_credit_draws (
       subject text NOT NULL,
       period text NOT NULL CHECK (period IN ('day', 'month')),
       period_start timestamptz NOT NULL,
       credits bigint NOT NULL CHECK (credits >= 0),
       PRIMARY KEY (subject, period, period_start)
     )`,
    `CREATE TABLE IF NOT EXISTS svc_developer_key_usage (
       credential_id text NOT NULL,
       day date NOT NULL,
       model text NOT NULL,
       requests bigint NOT NULL DEFAULT 0,
       prompt_tokens bigint NOT NULL DEFAULT 0,
       completion_tokens bigint NOT NULL DEFAULT 0,
       total_tokens bigint NOT NULL DEFAULT 0,
       credits bigint NOT NULL DEFAULT 0,
       PRIMARY KEY (credential_id, day, model)
     )`,
    `ALTER TABLE billing_holds ADD COLUMN IF NOT EXISTS credential_id text`,
    `ALTER TABLE billing_holds ADD COLUMN IF NOT EXISTS cap_subject text`,
    `ALTER TABLE billing_holds ADD COLUMN IF NOT EXISTS cap_day timestamptz`,
    `ALTER TABLE billing_holds ADD COLUMN IF NOT EXISTS cap_month timestamptz`,
    `ALTER TABLE billing_receipts ADD COLUMN IF NOT EXISTS credential_id text`,
  ],
  [
    'ALTER TABLE billing_receipts DROP COLUMN IF EXISTS credential_id',
    'ALTER TABLE billing_holds DROP COLUMN IF EXISTS cap_month',
    'ALTER TABLE billing_holds DROP COLUMN IF EXISTS cap_day',
    'ALTER TABLE billing_holds DROP COLUMN IF EXISTS cap_subject',
    'ALTER TABLE billing_holds DROP COLUMN IF EXISTS credential_id',
    'DROP TABLE IF EXISTS svc_developer_key_usage',
    'DROP TABLE IF EXISTS svc_limit_credit_draws',
    'DROP TABLE IF EXISTS svc_limit_counted',
    'DROP TABLE IF EXISTS svc_limit_leases',
    'ALTER TABLE svc_developer_keys DROP COLUMN IF EXISTS limits',
  ],
);
