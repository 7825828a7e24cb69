import { sqlMigration } from './types.ts';

/**
 * A2A tasks of callers with a credential, so `tasks/get` and `tasks/cancel` work on any replica.
 *
 * - `owner` is the principal key (`principal:<kind>:<id>`): another principal's task is not found.
 * - `state` is the protocol-neutral state (submitted, working, completed, failed, canceled);
 *   `status_message`, `artifacts` and `history` are protocol-neutral too and rendered as A2A 0.3
 *   or 1.0 when read, so one row answers both versions.
 * - `deadline_at`: a task still `working` past it (its replica stopped mid-task) reads as failed.
 * - `cancel_requested`: set by `tasks/cancel` on any replica; the replica running the task sees it
 *   and aborts the work.
 */
export default sqlMigration(
  '20261127T0310-a2a-tasks',
  [
    `CREATE TABLE a2a_tasks (
       id text PRIMARY KEY,
       owner text NOT NULL,
       context_id text NOT NULL,
       skill text NOT NULL,
       state text NOT NULL,
       status_message jsonb,
       artifacts jsonb NOT NULL,
       history jsonb NOT NULL,
       cancel_requested boolean NOT NULL DEFAULT false,
       deadline_at timestamptz NOT NULL,
       created_at timestamptz NOT NULL,
       updated_at timestamptz NOT NULL
     )`,
    'CREATE INDEX a2a_tasks_by_owner ON a2a_tasks (owner, created_at)',
    'CREATE INDEX a2a_tasks_by_age ON a2a_tasks (created_at)',
  ],
  ['DROP TABLE a2a_tasks'],
);
