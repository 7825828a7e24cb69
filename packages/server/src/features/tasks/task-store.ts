import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { TasksConfig } from './tasks-config.ts';

export type TaskStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';
/** The statuses a task ends in; it never leaves one. */
export const ENDED: readonly TaskStatus[] = ['completed', 'failed', 'cancelled', 'incomplete'];

export interface TaskRow {
  id: string;
  owner: string;
  kind: string;
  status: TaskStatus;
  input: unknown;
  result: unknown;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  max_attempts: number;
  cancel_requested: boolean;
  event_count: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date | null;
}

export interface TaskEvent {
  seq: number;
  type: string;
  data: unknown;
}

/** A claimed task: the row, and the lease every later write of its runner is fenced by. */
export interface ClaimedTask {
  row: TaskRow;
  lease: string;
}

/** How a runner ends its task. `failed` and `incomplete` carry a reason; every end may keep a result. */
export type TaskEnd = (
  | { status: 'completed'; result: unknown }
  | { status: 'incomplete' | 'cancelled'; result?: unknown; code?: string; message?: string }
  | { status: 'failed'; result?: unknown; code: string; message: string }
) & {
  /**
   * Writes what announces the end (a webhook's delivery) in the transaction that stores it, with the
   * status stored: a receiver that reads the task when the announcement arrives finds it ended, and
   * either both are stored or neither (the lease then runs out and the reaper ends and announces it).
   */
  announce?: (status: TaskEnd['status'], transaction: Transaction) => Promise<void>;
};

const COLUMNS = `id, owner, kind, status, input, result, error_code, error_message, attempts, max_attempts, cancel_requested,
  event_count, created_at, started_at, finished_at, expires_at`;

/**
 * The durable task store's SQL (docs/tasks.md): rows in `svc_tasks`, numbered events in
 * `svc_task_events`. Any replica claims a queued task (`FOR UPDATE SKIP LOCKED`) and holds it by a
 * lease it renews; every write of a runner names its lease, so a runner that lost its task (the
 * lease ran out and another replica took it up) changes nothing. Reads are by owner: a task of
 * another principal is not found. Waking is not here (task-signals.ts): this is one query a call.
 */
export class TaskStore {
  readonly #sequelize: Sequelize;
  readonly #config: TasksConfig;

  constructor(sequelize: Sequelize, config: TasksConfig) {
    this.#sequelize = sequelize;
    this.#config = config;
  }

  /**
   * A new queued task; `id` may be given (a Responses id), else `task_<random>`. `maxAttempts`
   * (default `SVC_TASKS_MAX_ATTEMPTS`): 1 for a task that must not run twice.
   */
  async create(task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number }, transaction?: Transaction): Promise<TaskRow> {
    const [row] = await this.#sequelize.query<TaskRow>(
      `INSERT INTO svc_tasks (id, owner, kind, input, max_attempts) VALUES (:id, :owner, :kind, :input::jsonb, :maxAttempts) RETURNING ${COLUMNS}`,
      {
        replacements: {
          id: task.id ?? `task_${randomBytes(16).toString('hex')}`,
          owner: task.owner,
          kind: task.kind,
          input: JSON.stringify(task.input ?? null),
          maxAttempts: task.maxAttempts ?? this.#config.maxAttempts,
        },
        type: QueryTypes.SELECT,
        ...(transaction ? { transaction } : {}),
      },
    );
    return row as TaskRow;
  }

  /**
   * A task claimed at once by the process that creates it (`in_progress`, its first attempt): for
   * work that needs what only this process holds (the request it answers), run here by
   * `TaskRunner.runClaimed`. Other replicas read, follow and cancel it as any task.
   */
  async createClaimed(task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number }): Promise<ClaimedTask> {
    return (await this.#insertClaimed(task)) as ClaimedTask;
  }

  /**
   * `createClaimed` under a per-owner cap on the tasks of this kind: nothing is stored (undefined)
   * when the owner already has `cap.running` of them queued or in progress on any replica, and the
   * owner's ended tasks of this kind beyond the newest `cap.kept` are deleted. The owner's advisory
   * lock, held by the transaction, makes concurrent creates on every replica count one after
   * another, so the cap is exact.
   */
  async createClaimedWithin(
    cap: { running: number; kept: number },
    task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number },
  ): Promise<ClaimedTask | undefined> {
    return this.#sequelize.transaction(async (transaction) => {
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:lock))', {
        replacements: { lock: `svc-tasks-running:${task.kind}:${task.owner}` },
        transaction,
      });
      const [count] = await this.#sequelize.query<{ running: number }>(
        `SELECT count(*)::int AS running FROM svc_tasks WHERE owner = :owner AND kind = :kind AND status IN ('queued', 'in_progress')`,
        { replacements: { owner: task.owner, kind: task.kind }, type: QueryTypes.SELECT, transaction },
      );
      if ((count?.running ?? 0) >= cap.running) return undefined;
      const claimed = await this.#insertClaimed(task, transaction);
      await this.#sequelize.query(
        `DELETE FROM svc_tasks WHERE id IN (
           SELECT id FROM svc_tasks WHERE owner = :owner AND kind = :kind AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC OFFSET :kept
         )`,
        { replacements: { owner: task.owner, kind: task.kind, kept: Math.max(0, cap.kept - 1) }, transaction },
      );
      return claimed;
    });
  }

  async #insertClaimed(
    task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number },
    transaction?: Transaction,
  ): Promise<ClaimedTask | undefined> {
    const lease = randomBytes(12).toString('base64url');
    const [row] = await this.#sequelize.query<TaskRow>(
      `INSERT INTO svc_tasks (id, owner, kind, input, max_attempts, status, attempts, started_at, lease_owner, lease_expires_at)
       VALUES (:id, :owner, :kind, :input::jsonb, :maxAttempts, 'in_progress', 1, now(), :lease, now() + make_interval(secs => :seconds)) RETURNING ${COLUMNS}`,
      {
        replacements: {
          id: task.id ?? `task_${randomBytes(16).toString('hex')}`,
          owner: task.owner,
          kind: task.kind,
          input: JSON.stringify(task.input ?? null),
          maxAttempts: task.maxAttempts ?? this.#config.maxAttempts,
          lease,
          seconds: this.#config.leaseSeconds,
        },
        type: QueryTypes.SELECT,
        ...(transaction ? { transaction } : {}),
      },
    );
    return row ? { row, lease } : undefined;
  }

  /**
   * `create` under a per-owner cap on the tasks of this kind not ended: nothing is stored
   * (undefined) when the owner already has `cap.active` of them queued or in progress on any
   * replica. The owner's advisory lock, held by the transaction, makes concurrent creates on every
   * replica count one after another, so the cap is exact.
   */
  async createWithin(
    cap: { active: number },
    task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number },
  ): Promise<TaskRow | undefined> {
    return this.#sequelize.transaction(async (transaction) => {
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:lock))', {
        replacements: { lock: `svc-tasks-active:${task.kind}:${task.owner}` },
        transaction,
      });
      const [count] = await this.#sequelize.query<{ active: number }>(
        `SELECT count(*)::int AS active FROM svc_tasks WHERE owner = :owner AND kind = :kind AND status IN ('queued', 'in_progress')`,
        { replacements: { owner: task.owner, kind: task.kind }, type: QueryTypes.SELECT, transaction },
      );
      if ((count?.active ?? 0) >= cap.active) return undefined;
      const [row] = await this.#sequelize.query<TaskRow>(
        `INSERT INTO svc_tasks (id, owner, kind, input, max_attempts) VALUES (:id, :owner, :kind, :input::jsonb, :maxAttempts) RETURNING ${COLUMNS}`,
        {
          replacements: {
            id: task.id ?? `task_${randomBytes(16).toString('hex')}`,
            owner: task.owner,
            kind: task.kind,
            input: JSON.stringify(task.input ?? null),
            maxAttempts: task.maxAttempts ?? this.#config.maxAttempts,
          },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      return row;
    });
  }

  /**
   * The owner's tasks of `kind` not expired, newest first, at most `limit`; after `afterId` (the
   * last task of the previous page, in the keyset (created_at, id)). Undefined when `afterId` is
   * not one of the owner's tasks (a cursor gone stale: its task expired).
   */
  async list(owner: string, kind: string, limit: number, afterId?: string): Promise<TaskRow[] | undefined> {
    if (afterId !== undefined && !(await this.get(afterId, owner))) return undefined;
    return this.#sequelize.query<TaskRow>(
      `SELECT ${COLUMNS} FROM svc_tasks WHERE owner = :owner AND kind = :kind AND (expires_at IS NULL OR expires_at > now())
         ${afterId === undefined ? '' : 'AND (created_at, id) < (SELECT created_at, id FROM svc_tasks WHERE id = :afterId)'}
       ORDER BY created_at DESC, id DESC LIMIT :limit`,
      { replacements: { owner, kind, limit, afterId: afterId ?? null }, type: QueryTypes.SELECT },
    );
  }

  /** The task, for its owner only; undefined for anyone else, or once it expired. */
  async get(id: string, owner: string): Promise<TaskRow | undefined> {
    const [row] = await this.#sequelize.query<TaskRow>(
      `SELECT ${COLUMNS} FROM svc_tasks WHERE id = :id AND owner = :owner AND (expires_at IS NULL OR expires_at > now())`,
      { replacements: { id, owner }, type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Claims the oldest queued task of these kinds, counting an attempt; undefined when none waits. */
  async claim(kinds: readonly string[]): Promise<ClaimedTask | undefined> {
    if (kinds.length === 0) return undefined;
    const lease = randomBytes(12).toString('base64url');
    const [row] = await this.#sequelize.query<TaskRow>(
      `UPDATE svc_tasks SET status = 'in_progress', attempts = attempts + 1, started_at = coalesce(started_at, now()), lease_owner = :lease,
         lease_expires_at = now() + make_interval(secs => :seconds)
       WHERE id = (SELECT id FROM svc_tasks WHERE status = 'queued' AND kind IN (:kinds) ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING ${COLUMNS}`,
      { replacements: { lease, seconds: this.#config.leaseSeconds, kinds: [...kinds] }, type: QueryTypes.SELECT },
    );
    return row ? { row, lease } : undefined;
  }

  /**
   * Extends the lease. `held: false` when it was lost (reaped, maybe run elsewhere now);
   * `cancel: true` when a cancel was asked from some replica and the runner must stop.
   */
  async renew(task: ClaimedTask): Promise<{ held: boolean; cancel: boolean }> {
    const [row] = await this.#sequelize.query<{ cancel_requested: boolean }>(
      `UPDATE svc_tasks SET lease_expires_at = now() + make_interval(secs => :seconds)
       WHERE id = :id AND lease_owner = :lease AND status = 'in_progress' RETURNING cancel_requested`,
      { replacements: { id: task.row.id, lease: task.lease, seconds: this.#config.leaseSeconds }, type: QueryTypes.SELECT },
    );
    return { held: Boolean(row), cancel: Boolean(row?.cancel_requested) };
  }

  /** Appends the next numbered event (fenced by the lease); its number, or undefined when the lease was lost. */
  async append(task: ClaimedTask, type: string, data: unknown): Promise<number | undefined> {
    const [row] = await this.#sequelize.query<{ seq: number }>(
      `WITH next AS (
         UPDATE svc_tasks SET event_count = event_count + 1 WHERE id = :id AND lease_owner = :lease AND status = 'in_progress' RETURNING event_count
       )
       INSERT INTO svc_task_events (task_id, seq, type, data) SELECT :id, event_count, :type, :data::jsonb FROM next RETURNING seq`,
      { replacements: { id: task.row.id, lease: task.lease, type, data: JSON.stringify(data ?? null) }, type: QueryTypes.SELECT },
    );
    return row?.seq;
  }

  /**
   * Appends events in one statement (fenced by the lease), numbered next and in the given order;
   * the first one's number, or undefined when the lease was lost (nothing is stored).
   */
  async appendMany(task: ClaimedTask, events: ReadonlyArray<{ type: string; data: unknown }>): Promise<number | undefined> {
    if (events.length === 0) return undefined;
    if (events.length === 1) return this.append(task, events[0]!.type, events[0]!.data);
    const [row] = await this.#sequelize.query<{ first: number | null }>(
      `WITH next AS (
         UPDATE svc_tasks SET event_count = event_count + :count WHERE id = :id AND lease_owner = :lease AND status = 'in_progress'
         RETURNING event_count - :count AS base
       ), added AS (
         INSERT INTO svc_task_events (task_id, seq, type, data)
         SELECT :id, next.base + event.position, event.value ->> 'type', event.value -> 'data'
         FROM next, jsonb_array_elements(:events::jsonb) WITH ORDINALITY AS event(value, position)
         RETURNING seq
       )
       SELECT min(seq)::int AS first FROM added`,
      {
        replacements: {
          id: task.row.id,
          lease: task.lease,
          count: events.length,
          events: JSON.stringify(events.map((event) => ({ type: event.type, data: event.data ?? null }))),
        },
        type: QueryTypes.SELECT,
      },
    );
    return row?.first ?? undefined;
  }

  /** Events numbered after `after`, in order, at most `limit`. The caller checked the owner (`get`). */
  async events(id: string, after: number, limit = 500): Promise<TaskEvent[]> {
    return this.#sequelize.query<TaskEvent>('SELECT seq, type, data FROM svc_task_events WHERE task_id = :id AND seq > :after ORDER BY seq LIMIT :limit', {
      replacements: { id, after, limit },
      type: QueryTypes.SELECT,
    });
  }

  /** Ends the task (fenced by the lease), keeping it for the result TTL; false when the lease was lost. */
  async finish(task: ClaimedTask, end: TaskEnd): Promise<boolean> {
    const { announce } = end;
    if (!announce) return this.#finish(task, end);
    return this.#sequelize.transaction(async (transaction) => {
      const finished = await this.#finish(task, end, transaction);
      if (finished) await announce(end.status, transaction);
      return finished;
    });
  }

  async #finish(task: ClaimedTask, end: TaskEnd, transaction?: Transaction): Promise<boolean> {
    const rows = await this.#sequelize.query(
      `UPDATE svc_tasks SET status = :status, result = :result::jsonb, error_code = :code, error_message = :message, finished_at = now(),
         expires_at = now() + make_interval(secs => :ttl), lease_owner = NULL, lease_expires_at = NULL
       WHERE id = :id AND lease_owner = :lease AND status = 'in_progress' RETURNING id`,
      {
        replacements: {
          id: task.row.id,
          lease: task.lease,
          status: end.status,
          result: end.result === undefined ? null : JSON.stringify(end.result),
          code: 'code' in end ? (end.code ?? null) : null,
          message: 'message' in end ? (end.message ?? null) : null,
          ttl: this.#config.resultTtlSeconds,
        },
        type: QueryTypes.SELECT,
        ...(transaction ? { transaction } : {}),
      },
    );
    return rows.length > 0;
  }

  /**
   * Cancel, from any replica, by the owner: a queued task ends `cancelled` at once; a running one
   * is marked, and its runner stops at its next renewal or wake. Answers the task as it is now
   * (an ended task is left as it ended), or undefined when the owner has no such task.
   */
  async cancel(id: string, owner: string): Promise<TaskRow | undefined> {
    await this.#sequelize.query(
      `UPDATE svc_tasks SET
         status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
         finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END,
         expires_at = CASE WHEN status = 'queued' THEN now() + make_interval(secs => :ttl) ELSE expires_at END,
         cancel_requested = true
       WHERE id = :id AND owner = :owner AND status IN ('queued', 'in_progress')`,
      { replacements: { id, owner, ttl: this.#config.resultTtlSeconds } },
    );
    return this.get(id, owner);
  }

  /** Whether a lease ran out and whether a task waits: the backstop's one read, before any write. */
  async backstopFinds(): Promise<{ expired: boolean; queued: boolean }> {
    const [row] = await this.#sequelize.query<{ expired: boolean; queued: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM svc_tasks WHERE status = 'in_progress' AND lease_expires_at < now()) AS expired,
         EXISTS (SELECT 1 FROM svc_tasks WHERE status = 'queued') AS queued`,
      { type: QueryTypes.SELECT },
    );
    return { expired: Boolean(row?.expired), queued: Boolean(row?.queued) };
  }

  /**
   * Tasks whose runner died (lease ran out): queued again while attempts remain, else `failed`
   * with `task_runner_lost`; a task asked to cancel ends `cancelled` instead of running again.
   * Answers whether any task was put back in the queue, and the tasks it ended: this statement
   * alone decides, so each ended task is answered to exactly one replica (the one to announce it).
   * `onEnded` runs in the same transaction as their end (a webhook's delivery row is written with
   * the failure it announces, or neither is); if it throws, nothing is reaped this time.
   */
  async reapExpiredLeases(onEnded?: (ended: TaskRow[], transaction: Transaction) => Promise<void>): Promise<{ requeued: boolean; ended: TaskRow[] }> {
    // The backstop calls this every few seconds, nearly always with nothing to reap: one read
    // instead of a transaction of four statements (issue 42). A lease that runs out just after it
    // is reaped at the next turn, as one that runs out just after the reap is.
    const expired = await this.#sequelize.query(`SELECT 1 FROM svc_tasks WHERE status = 'in_progress' AND lease_expires_at < now() LIMIT 1`, {
      type: QueryTypes.SELECT,
    });
    if (expired.length === 0) return { requeued: false, ended: [] };
    return this.#sequelize.transaction((transaction) => this.#reap(transaction, onEnded));
  }

  async #reap(
    transaction: Transaction,
    onEnded?: (ended: TaskRow[], transaction: Transaction) => Promise<void>,
  ): Promise<{ requeued: boolean; ended: TaskRow[] }> {
    const ended = await this.#sequelize.query<TaskRow>(
      `UPDATE svc_tasks SET status = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'failed' END,
         error_code = CASE WHEN cancel_requested THEN NULL ELSE 'task_runner_lost' END,
         error_message = CASE WHEN cancel_requested THEN NULL
           ELSE 'The task''s runner stopped (server gone or lease expired) on each of its ' || max_attempts || ' attempts.' END,
         finished_at = now(), expires_at = now() + make_interval(secs => :ttl), lease_owner = NULL, lease_expires_at = NULL
       WHERE status = 'in_progress' AND lease_expires_at < now() AND (attempts >= max_attempts OR cancel_requested) RETURNING ${COLUMNS}`,
      { replacements: { ttl: this.#config.resultTtlSeconds }, type: QueryTypes.SELECT, transaction },
    );
    if (ended.length > 0) await onEnded?.(ended, transaction);
    const requeued = await this.#sequelize.query(
      `UPDATE svc_tasks SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL
       WHERE status = 'in_progress' AND lease_expires_at < now() AND attempts < max_attempts AND NOT cancel_requested RETURNING id`,
      { type: QueryTypes.SELECT, transaction },
    );
    return { requeued: requeued.length > 0, ended };
  }

  /**
   * Gives a task back at shutdown: queued again at once for another replica. A stop on purpose is
   * not a runner lost, so the attempt is not counted.
   */
  async release(task: ClaimedTask): Promise<void> {
    await this.#sequelize.query(
      `UPDATE svc_tasks SET status = 'queued', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL
       WHERE id = :id AND lease_owner = :lease AND status = 'in_progress' AND NOT cancel_requested`,
      { replacements: { id: task.row.id, lease: task.lease } },
    );
  }

  /** Deletes ended tasks past their TTL (their events go with them). */
  async prune(): Promise<number> {
    const rows = await this.#sequelize.query('DELETE FROM svc_tasks WHERE expires_at < now() RETURNING id', { type: QueryTypes.SELECT });
    return rows.length;
  }
}
