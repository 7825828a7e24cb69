import { sqlMigration } from './types.ts';

/**
 * Receipts: every public key svc has signed receipts with (published at /.well-known/jwks.json,
 * kept after rotation so old receipts stay verifiable), and the verification the server made
 * when a blackboard put carried an svc receipt. The verification has a table of its own (not a
 * column of blackboard_items) so the put batch statement stays as it is; it goes with its item.
 */
export default sqlMigration(
  '20261122T1800-receipts',
  [
    `CREATE TABLE IF NOT EXISTS svc_receipt_keys (
       kid text PRIMARY KEY,
       jwk jsonb NOT NULL,
       first_used_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS blackboard_receipt_verifications (
       item_id text PRIMARY KEY REFERENCES blackboard_items (id) ON DELETE CASCADE,
       verification jsonb NOT NULL
     )`,
  ],
  ['DROP TABLE IF EXISTS blackboard_receipt_verifications', 'DROP TABLE IF EXISTS svc_receipt_keys'],
);
