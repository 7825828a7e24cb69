import { sqlMigration } from './types.ts';

/**
 * One row per PostgreSQL backend (keyed by its pid), written by `flushWal` (db/wal-flush.ts):
 * a tiny synchronous commit on a row no other session touches, whose only purpose is to wait
 * for the WAL flush that makes an earlier asynchronous commit durable.
 */
export default sqlMigration(
  '20261121T1400-wal-flush',
  [
    `CREATE TABLE IF NOT EXISTS svc_wal_flush (
       backend_pid integer PRIMARY KEY,
       flushes bigint NOT NULL DEFAULT 1,
       flushed_at timestamptz NOT NULL DEFAULT now()
     )`,
  ],
  ['DROP TABLE IF EXISTS svc_wal_flush'],
);
