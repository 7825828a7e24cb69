import { sqlMigration } from './types.ts';

/**
 * Identity: spent one-time OAuth ids (codes, refresh tokens), revoked token families, developer
 * keys (hash only) and their append-only lifecycle receipts. OAuth clients need no table: a
 * client id is a signed registration.
 */
export default sqlMigration(
  '20261121T1300-identity',
  [
    `CREATE TABLE IF NOT EXISTS svc_oauth_spent (
       id text PRIMARY KEY,
       kind text NOT NULL,
       family_id text,
       expires_at timestamptz NOT NULL
     )`,
    `CREATE INDEX IF NOT EXISTS svc_oauth_spent_expiry ON svc_oauth_spent (expires_at)`,
    `CREATE TABLE IF NOT EXISTS svc_oauth_revoked_families (
       family_id text PRIMARY KEY,
       reason text NOT NULL,
       revoked_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL
     )`,
    `CREATE TABLE IF NOT EXISTS svc_developer_keys (
       id text PRIMARY KEY,
       owner text NOT NULL,
       name text NOT NULL,
       scopes text[] NOT NULL,
       secret_hash text NOT NULL,
       status text NOT NULL DEFAULT 'active',
       created_at timestamptz NOT NULL,
       revoked_at timestamptz,
       rotated_from text,
       replaced_by text,
       ending_receipt_id text
     )`,
    `CREATE INDEX IF NOT EXISTS svc_developer_keys_owner ON svc_developer_keys (owner, created_at DESC, id DESC)`,
    `CREATE TABLE IF NOT EXISTS svc_developer_key_receipts (
       seq bigserial PRIMARY KEY,
       id text NOT NULL UNIQUE,
       credential_id text NOT NULL,
       owner text NOT NULL,
       event text NOT NULL,
       occurred_at timestamptz NOT NULL,
       actor text NOT NULL,
       name text NOT NULL,
       scopes text[] NOT NULL,
       related_credential_id text
     )`,
    `CREATE INDEX IF NOT EXISTS svc_developer_key_receipts_credential ON svc_developer_key_receipts (credential_id, seq)`,
    // Receipts are append-only: the database itself refuses to change or delete one.
    `CREATE OR REPLACE FUNCTION svc_refuse_receipt_change() RETURNS trigger AS $$
     BEGIN
       RAISE EXCEPTION 'developer key receipts are append-only';
     END;
     $$ LANGUAGE plpgsql`,
    `DROP TRIGGER IF EXISTS svc_developer_key_receipts_append_only ON svc_developer_key_receipts`,
    `CREATE TRIGGER svc_developer_key_receipts_append_only BEFORE UPDATE OR DELETE ON svc_developer_key_receipts
     FOR EACH ROW EXECUTE FUNCTION svc_refuse_receipt_change()`,
  ],
  [
    'DROP TABLE IF EXISTS svc_developer_key_receipts',
    'DROP FUNCTION IF EXISTS svc_refuse_receipt_change()',
    'DROP TABLE IF EXISTS svc_developer_keys',
    'DROP TABLE IF EXISTS svc_oauth_revoked_families',
    'DROP TABLE IF EXISTS svc_oauth_spent',
  ],
);
