import { sqlMigration } from './types.ts';

/**
 * What the operator's key list shows beside a key's limits (issue 45):
 *
 * - `last_used_at`: when a request last authenticated with the key, written in batches with the
 *   key usage counters (key-usage-batch.ts), so it is exact to within the flush interval and the
 *   hot path never writes a row per request.
 * - `expires_at`: when the key stops working by itself (null: until revoked); the resolver
 *   refuses it from then on, as it does a revoked key.
 * A page of keys sums each key's spent credits from svc_developer_key_usage, whose primary key
 * starts with credential_id: no index is needed for that.
 */
export default sqlMigration(
  '20261207T0600-key-last-used',
  [
    'ALTER TABLE svc_developer_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz',
    'ALTER TABLE svc_developer_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz',
  ],
  ['ALTER TABLE svc_developer_keys DROP COLUMN IF EXISTS expires_at', 'ALTER TABLE svc_developer_keys DROP COLUMN IF EXISTS last_used_at'],
);
