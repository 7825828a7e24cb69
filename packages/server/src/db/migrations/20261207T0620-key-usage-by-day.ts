import { sqlMigration } from './types.ts';

/**
 * The operator's usage report (GET /v1/developer/usage) sums the usage rows of a range of days
 * across every key: an index by day lets it read only the range's rows, not the whole table.
 */
export default sqlMigration(
  '20261207T0620-key-usage-by-day',
  ['CREATE INDEX IF NOT EXISTS svc_developer_key_usage_by_day ON svc_developer_key_usage (day)'],
  ['DROP INDEX IF EXISTS svc_developer_key_usage_by_day'],
);
