import { sqlMigration } from './types.ts';

/**
 * Blackboard items and the posting switch. `created_at` has millisecond precision so a cursor
 * written as an ISO timestamp names a row exactly; puts serialise on an advisory lock, so
 * `created_at` also grows in commit order and a poller never misses a late commit.
 */
export default sqlMigration(
  '20261121T1300-blackboard',
  [
    `CREATE TABLE IF NOT EXISTS blackboard_items (
       seq bigserial UNIQUE,
       id text PRIMARY KEY,
       key text NOT NULL,
       task text,
       kind text,
       topics text[] NOT NULL DEFAULT '{}',
       parent_id text,
       artifact_id text,
       revision text,
       runtime_versions jsonb,
       text text NOT NULL,
       item jsonb NOT NULL,
       value_bytes integer NOT NULL,
       key_id text NOT NULL,
       idempotency_key text,
       request_hash text NOT NULL,
       edit_token_hash text NOT NULL,
       created_at timestamptz(3) NOT NULL,
       expires_at timestamptz(3) NOT NULL,
       tombstoned_at timestamptz(3)
     )`,
    `CREATE INDEX IF NOT EXISTS blackboard_items_order ON blackboard_items (created_at DESC, id DESC)`,
    `CREATE INDEX IF NOT EXISTS blackboard_items_key_order ON blackboard_items (key, created_at DESC, id DESC)`,
    `CREATE INDEX IF NOT EXISTS blackboard_items_parent ON blackboard_items (parent_id) WHERE parent_id IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS blackboard_items_artifact ON blackboard_items (artifact_id, created_at DESC, id DESC) WHERE artifact_id IS NOT NULL`,
    // One item per idempotency identity: concurrent identical puts meet here and only one inserts.
    `CREATE UNIQUE INDEX IF NOT EXISTS blackboard_items_idempotency ON blackboard_items (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS blackboard_settings (
       id smallint PRIMARY KEY CHECK (id = 1),
       posting_enabled boolean NOT NULL DEFAULT true,
       posting_reason text,
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    `INSERT INTO blackboard_settings (id) VALUES (1) ON CONFLICT (id) DO NOTHING`,
  ],
  ['DROP TABLE IF EXISTS blackboard_settings', 'DROP TABLE IF EXISTS blackboard_items'],
);
