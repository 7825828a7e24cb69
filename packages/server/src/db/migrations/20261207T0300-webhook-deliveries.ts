import { sqlMigration } from './types.ts';

/**
 * Webhook deliveries of finished background responses (features/responses/webhooks): one row per
 * event and endpoint, sent by a task of the durable task store (so any replica sends it, and a
 * replica that dies mid-delivery leaves it to another), retried with backoff.
 *
 * - `status`: pending, delivered (a 2xx), or failed (every attempt refused or unanswered).
 * - `last_status` / `last_error`: what the latest attempt got (an HTTP status, or why none).
 */
export default sqlMigration(
  '20261207T0300-webhook-deliveries',
  [
    `CREATE TABLE svc_webhook_deliveries (
       id text PRIMARY KEY,
       owner text NOT NULL,
       event_type text NOT NULL,
       response_id text NOT NULL,
       url text NOT NULL,
       payload text NOT NULL,
       status text NOT NULL DEFAULT 'pending',
       attempts integer NOT NULL DEFAULT 0,
       last_status integer,
       last_error text,
       created_at timestamptz NOT NULL DEFAULT now(),
       delivered_at timestamptz
     )`,
    'CREATE INDEX svc_webhook_deliveries_by_owner ON svc_webhook_deliveries (owner, created_at DESC, id DESC)',
  ],
  ['DROP TABLE svc_webhook_deliveries'],
);
