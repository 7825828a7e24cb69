import { sqlMigration } from './types.ts';

/**
 * Stored responses of the Responses API, so `GET /v1/responses/{id}` and `previous_response_id`
 * work on any replica.
 *
 * - `owner` is the principal key (`principal:<kind>:<id>`): another principal reads nothing.
 * - `input_items` is the request's own input, with ids (what `input_items` lists); `context` is
 *   the conversation the model saw before it (the previous response's context, input and output),
 *   so continuing a conversation reads one row, however long the chain.
 * - Retention is read against `created_at` with the setting in force (SVC_RESPONSES_RETENTION_DAYS),
 *   so changing it applies to every row: reads ignore an expired row at once, housekeeping deletes it later.
 */
export default sqlMigration(
  '20261126T2300-responses',
  [
    `CREATE TABLE responses (
       id text PRIMARY KEY,
       owner text NOT NULL,
       model text NOT NULL,
       response jsonb NOT NULL,
       input_items jsonb NOT NULL,
       context jsonb NOT NULL,
       created_at timestamptz NOT NULL
     )`,
    'CREATE INDEX responses_by_age ON responses (created_at)',
  ],
  ['DROP TABLE responses'],
);
