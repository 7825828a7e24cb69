import { sqlMigration } from './types.ts';

/**
 * Fixed-window counters shared by every replica: rate limits and admission windows
 * (`blackboard:ip:1.2.3.4`, window start) increment here atomically.
 */
export default sqlMigration(
  '20261121T1200-foundation',
  [
    `CREATE TABLE IF NOT EXISTS svc_rate_counters (
       bucket text NOT NULL,
       window_start timestamptz NOT NULL,
       hits bigint NOT NULL DEFAULT 0,
       amount bigint NOT NULL DEFAULT 0,
       PRIMARY KEY (bucket, window_start)
     )`,
    `CREATE INDEX IF NOT EXISTS svc_rate_counters_window ON svc_rate_counters (window_start)`,
  ],
  ['DROP TABLE IF EXISTS svc_rate_counters'],
);
