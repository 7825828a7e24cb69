import { sqlMigration } from './types.ts';

/**
 * The durable task store (features/tasks): every long operation an agent can start (a background
 * Responses request; MCP task-augmented tool calls and A2A skills) is a row here, run by whichever
 * replica claims it (`FOR UPDATE SKIP LOCKED`, a lease it renews, writes fenced by the lease).
 *
 * - `owner`: the principal key of the credential that created it; only it reads or cancels.
 * - `status`: queued, in_progress, then one of completed, failed, cancelled, incomplete.
 * - `cancel_requested`: set by a cancel on any replica while the task runs; the runner stops.
 * - `event_count`: the number of the last event appended (`svc_task_events.seq`, from 1).
 * - `expires_at`: set when the task ends (now + the result TTL); the prune deletes it after.
 */
export default sqlMigration(
  '20261207T0230-tasks',
  [
    `CREATE TABLE svc_tasks (
       id text PRIMARY KEY,
       owner text NOT NULL,
       kind text NOT NULL,
       status text NOT NULL DEFAULT 'queued',
       input jsonb NOT NULL,
       result jsonb,
       error_code text,
       error_message text,
       attempts integer NOT NULL DEFAULT 0,
       max_attempts integer NOT NULL,
       lease_owner text,
       lease_expires_at timestamptz,
       cancel_requested boolean NOT NULL DEFAULT false,
       event_count integer NOT NULL DEFAULT 0,
       created_at timestamptz NOT NULL DEFAULT now(),
       started_at timestamptz,
       finished_at timestamptz,
       expires_at timestamptz
     )`,
    "CREATE INDEX svc_tasks_queued ON svc_tasks (created_at, id) WHERE status = 'queued'",
    "CREATE INDEX svc_tasks_leases ON svc_tasks (lease_expires_at) WHERE status = 'in_progress'",
    'CREATE INDEX svc_tasks_expiry ON svc_tasks (expires_at) WHERE expires_at IS NOT NULL',
    `CREATE TABLE svc_task_events (
       task_id text NOT NULL REFERENCES svc_tasks (id) ON DELETE CASCADE,
       seq integer NOT NULL,
       type text NOT NULL,
       data jsonb NOT NULL,
       PRIMARY KEY (task_id, seq)
     )`,
  ],
  ['DROP TABLE svc_task_events', 'DROP TABLE svc_tasks'],
);
