import { sqlMigration } from './types.ts';

/**
 * The response cache (features/inference/response-cache.ts), in the database so every replica
 * reads what any one stored.
 *
 * - `key` is the SHA-256 of the principal, the operation, the model and the canonical request;
 *   `principal` and `model` are kept beside it for purges and the report.
 * - `body` is the answer's JSON text as it was sent (text, not jsonb: jsonb would reorder its
 *   keys, and a hit must be the same bytes).
 * - `entry_seq` and `bytes_end` are the running totals of entries and bytes ever written, read
 *   from the one counter row when the entry is stored. Both grow in the order entries are
 *   written, so "past the caps" (`entry_seq <= entries_written - max_entries OR bytes_end - bytes <
 *   bytes_written - max_bytes`) is a prefix of `entry_seq`, found without adding up the table.
 */
export default sqlMigration(
  '20261127T0320-response-cache',
  [
    `CREATE TABLE svc_response_cache (
       key text PRIMARY KEY,
       principal text NOT NULL,
       operation text NOT NULL,
       model text NOT NULL,
       body text NOT NULL,
       bytes integer NOT NULL,
       entry_seq bigint NOT NULL,
       bytes_end bigint NOT NULL,
       created_at timestamptz NOT NULL,
       expires_at timestamptz NOT NULL
     )`,
    'CREATE INDEX svc_response_cache_by_age ON svc_response_cache (entry_seq)',
    'CREATE INDEX svc_response_cache_by_expiry ON svc_response_cache (expires_at)',
    'CREATE INDEX svc_response_cache_by_model ON svc_response_cache (model)',
    `CREATE TABLE svc_response_cache_totals (
       id integer PRIMARY KEY CHECK (id = 1),
       entries_written bigint NOT NULL,
       bytes_written bigint NOT NULL
     )`,
    'INSERT INTO svc_response_cache_totals (id, entries_written, bytes_written) VALUES (1, 0, 0)',
  ],
  ['DROP TABLE svc_response_cache_totals', 'DROP TABLE svc_response_cache'],
);
