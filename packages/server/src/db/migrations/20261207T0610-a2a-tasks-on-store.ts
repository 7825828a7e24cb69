import { sqlMigration } from './types.ts';

/**
 * A2A tasks move onto the durable task store (features/tasks, kind `a2a.skill`): each row of
 * `a2a_tasks` becomes a task of `svc_tasks`, then the old table goes.
 *
 * - `input` keeps what every read renders besides the ending (`contextId`, `skill`, `history`);
 *   `result` keeps the ending (`statusMessage`, `artifacts`) of a task that ended.
 * - States: working (and submitted) become in_progress, canceled becomes cancelled; a failed task
 *   keeps its status message's first text as `error_message`.
 * - An ended task is kept as it would have been (24 h from its creation, the old retention).
 * - A task still working was run by a replica of the version before: its lease is its old deadline,
 *   with no attempt left, so the store fails it (`task_runner_lost`) once the deadline passes,
 *   as the old table read it failed then.
 */
export default sqlMigration(
  '20261207T0610-a2a-tasks-on-store',
  [
    `INSERT INTO svc_tasks (id, owner, kind, status, input, result, error_code, error_message, attempts, max_attempts, lease_owner, lease_expires_at,
       cancel_requested, created_at, started_at, finished_at, expires_at)
     SELECT id, owner, 'a2a.skill',
       CASE state WHEN 'completed' THEN 'completed' WHEN 'failed' THEN 'failed' WHEN 'canceled' THEN 'cancelled' ELSE 'in_progress' END,
       jsonb_build_object('contextId', context_id, 'skill', skill, 'history', history),
       CASE WHEN state IN ('completed', 'failed', 'canceled') THEN jsonb_strip_nulls(jsonb_build_object('statusMessage', status_message, 'artifacts', artifacts)) END,
       CASE WHEN state = 'failed' THEN 'a2a_skill_failed' END,
       CASE WHEN state = 'failed' THEN coalesce(status_message #>> '{parts,0,text}', 'The skill failed.') END,
       1, 1,
       CASE WHEN state IN ('completed', 'failed', 'canceled') THEN NULL ELSE 'a2a-tasks-migrated' END,
       CASE WHEN state IN ('completed', 'failed', 'canceled') THEN NULL ELSE deadline_at END,
       cancel_requested, created_at, created_at,
       CASE WHEN state IN ('completed', 'failed', 'canceled') THEN updated_at END,
       CASE WHEN state IN ('completed', 'failed', 'canceled') THEN created_at + interval '24 hours' END
     FROM a2a_tasks
     ON CONFLICT (id) DO NOTHING`,
    'DROP TABLE a2a_tasks',
  ],
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
    `INSERT INTO a2a_tasks (id, owner, context_id, skill, state, status_message, artifacts, history, cancel_requested, deadline_at, created_at, updated_at)
     SELECT id, owner, input ->> 'contextId', input ->> 'skill',
       CASE status WHEN 'completed' THEN 'completed' WHEN 'cancelled' THEN 'canceled' WHEN 'in_progress' THEN 'working' WHEN 'queued' THEN 'submitted' ELSE 'failed' END,
       result -> 'statusMessage', coalesce(result -> 'artifacts', '[]'), input -> 'history', cancel_requested,
       coalesce(lease_expires_at, created_at + interval '120 seconds'), created_at, coalesce(finished_at, started_at, created_at)
     FROM svc_tasks WHERE kind = 'a2a.skill'`,
    "DELETE FROM svc_tasks WHERE kind = 'a2a.skill'",
  ],
);
