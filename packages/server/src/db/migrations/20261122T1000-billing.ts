import { sqlMigration } from './types.ts';

/**
 * Billing: prepaid credit accounts, the ledger every movement is written to, Checkout sessions,
 * grants (one per paid session), processed webhook events (one per event id), holds of credit
 * calls (one per principal and Idempotency-Key) and the usage receipts of committed calls.
 * An account's two balances always equal the sums of its ledger deltas (CHECKs keep them >= 0).
 */
export default sqlMigration(
  '20261122T1000-billing',
  [
    `CREATE TABLE IF NOT EXISTS billing_accounts (
       principal_id text PRIMARY KEY,
       spendable bigint NOT NULL DEFAULT 0 CHECK (spendable >= 0),
       reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS billing_ledger (
       seq bigserial PRIMARY KEY,
       principal_id text NOT NULL,
       kind text NOT NULL CHECK (kind IN ('grant', 'hold', 'commit', 'release', 'refund')),
       spendable_delta bigint NOT NULL,
       reserved_delta bigint NOT NULL,
       reference text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX IF NOT EXISTS billing_ledger_principal ON billing_ledger (principal_id, seq)`,
    `CREATE TABLE IF NOT EXISTS billing_checkout_sessions (
       session_id text PRIMARY KEY,
       principal_id text NOT NULL,
       pack_code text NOT NULL,
       credits integer NOT NULL,
       amount integer NOT NULL,
       currency text NOT NULL,
       url text NOT NULL,
       idempotency_key text,
       created_at timestamptz NOT NULL DEFAULT now(),
       UNIQUE (principal_id, idempotency_key)
     )`,
    `CREATE TABLE IF NOT EXISTS billing_grants (
       session_id text PRIMARY KEY,
       principal_id text NOT NULL,
       pack_code text NOT NULL,
       credits integer NOT NULL,
       amount integer NOT NULL,
       payment_intent text,
       event_id text NOT NULL,
       refunded_credits integer NOT NULL DEFAULT 0,
       granted_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX IF NOT EXISTS billing_grants_payment_intent ON billing_grants (payment_intent)`,
    `CREATE TABLE IF NOT EXISTS billing_webhook_events (
       event_id text PRIMARY KEY,
       type text NOT NULL,
       received_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS billing_holds (
       id text PRIMARY KEY,
       principal_id text NOT NULL,
       idempotency_key text NOT NULL,
       fingerprint text NOT NULL,
       status text NOT NULL CHECK (status IN ('held', 'committed', 'released')),
       credits integer NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL,
       finished_at timestamptz,
       result text,
       UNIQUE (principal_id, idempotency_key)
     )`,
    `CREATE INDEX IF NOT EXISTS billing_holds_expiry ON billing_holds (expires_at) WHERE status = 'held'`,
    `CREATE TABLE IF NOT EXISTS billing_receipts (
       seq bigserial PRIMARY KEY,
       id text NOT NULL UNIQUE,
       principal_id text NOT NULL,
       hold_id text NOT NULL UNIQUE,
       created_at timestamptz NOT NULL DEFAULT now(),
       credits integer NOT NULL,
       operation text NOT NULL,
       model text NOT NULL,
       request_id text NOT NULL,
       idempotency_key text NOT NULL,
       usage jsonb NOT NULL
     )`,
    `CREATE INDEX IF NOT EXISTS billing_receipts_page ON billing_receipts (principal_id, seq DESC)`,
  ],
  [
    'DROP TABLE IF EXISTS billing_receipts',
    'DROP TABLE IF EXISTS billing_holds',
    'DROP TABLE IF EXISTS billing_webhook_events',
    'DROP TABLE IF EXISTS billing_grants',
    'DROP TABLE IF EXISTS billing_checkout_sessions',
    'DROP TABLE IF EXISTS billing_ledger',
    'DROP TABLE IF EXISTS billing_accounts',
  ],
);
