import { sqlMigration } from './types.ts';

/**
 * `svc_webhook_deliveries` read by its two walks: the operator's list of every delivery, newest
 * first (`GET /v1/webhooks/deliveries`, keyset on (created_at, id)), and the prune of deliveries
 * past their retention (`SVC_RESPONSES_WEBHOOK_RETENTION_DAYS`, oldest first). One index serves
 * both; before it, each page and each prune read the whole table.
 */
export default sqlMigration(
  '20261207T0620-webhook-deliveries-index',
  ['CREATE INDEX svc_webhook_deliveries_by_age ON svc_webhook_deliveries (created_at DESC, id DESC)'],
  ['DROP INDEX svc_webhook_deliveries_by_age'],
);
