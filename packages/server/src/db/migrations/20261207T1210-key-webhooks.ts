import { sqlMigration } from './types.ts';

/**
 * Per-key webhook endpoints (issue 43): a developer key's own endpoint for its background
 * responses (`PUT /v1/developer/credentials/{id}/webhook`), and which key a delivery is for.
 *
 * - `svc_key_webhooks.secret`: the Standard Webhooks signing secret (`whsec_...`). Kept as it is,
 *   unlike a key's secret: svc signs with it, so a hash would not do. Shown once, when set.
 * - `svc_webhook_deliveries.credential_id`: the key whose endpoint a delivery goes to (signed with
 *   that endpoint's secret when sent); null for the operator's endpoint (SVC_RESPONSES_WEBHOOK_URL).
 */
export default sqlMigration(
  '20261207T1210-key-webhooks',
  [
    `CREATE TABLE svc_key_webhooks (
       credential_id text PRIMARY KEY REFERENCES svc_developer_keys (id) ON DELETE CASCADE,
       url text NOT NULL,
       secret text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    'ALTER TABLE svc_webhook_deliveries ADD COLUMN credential_id text',
  ],
  ['ALTER TABLE svc_webhook_deliveries DROP COLUMN credential_id', 'DROP TABLE svc_key_webhooks'],
);
