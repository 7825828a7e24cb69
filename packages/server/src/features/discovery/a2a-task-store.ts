import { QueryTypes, type Sequelize } from 'sequelize';
import { a2aLimits } from '@svc/schemas';
import type { NeutralArtifact, NeutralMessage, NeutralTask, TaskState } from './a2a-wire.ts';

interface TaskRow {
  id: string;
  context_id: string;
  skill: string;
  state: TaskState;
  status_message: NeutralMessage | null;
  artifacts: NeutralArtifact[];
  history: NeutralMessage[];
  cancel_requested: boolean;
  overdue: boolean;
  updated_at: Date | string;
}

const FRESH = `created_at > clock_timestamp() - make_interval(hours => ${a2aLimits.retentionHours})`;

const OVERDUE_MESSAGE = 'The task did not finish within its deadline (the replica running it may have stopped); send the message again.';

function taskOf(row: TaskRow): NeutralTask {
  // A task still working past its deadline lost its replica: it reads as failed, as it is.
  const lost = row.overdue && (row.state === 'working' || row.state === 'submitted');
  return {
    id: row.id,
    contextId: row.context_id,
    skill: row.skill,
    state: lost ? 'failed' : row.state,
    statusMessage: lost ? { messageId: `${row.id}-deadline`, role: 'agent', parts: [{ text: OVERDUE_MESSAGE }] } : (row.status_message ?? undefined),
    timestamp: new Date(row.updated_at).toISOString(),
    artifacts: row.artifacts,
    history: row.history,
  };
}

/** What a finished task keeps: bounded, so one huge answer cannot fill the table (the caller got it whole). */
function storable(artifacts: NeutralArtifact[]): NeutralArtifact[] {
  const bytes = Buffer.byteLength(JSON.stringify(artifacts));
  if (bytes <= a2aLimits.maxStoredResultBytes) return artifacts;
  return artifacts.map((artifact) => ({
    ...artifact,
    parts: [{ text: `The answer was ${bytes} bytes, over the ${a2aLimits.maxStoredResultBytes} a stored task keeps; it was sent whole when the task ran.` }],
  }));
}

/**
 * A2A tasks in the database, each owned by one principal key. Another owner's task, or one past
 * its retention, reads as not found. Reads and cancels work on any replica; the replica running a
 * task polls `cancelRequested` to stop its work when another replica was asked.
 */
export class A2aTaskStore {
  readonly #sequelize: Sequelize;

  constructor(sequelize: Sequelize) {
    this.#sequelize = sequelize;
  }

  /**
   * Stores a new working task if its owner has fewer than `maxRunning` running, and deletes the
   * owner's oldest beyond the per-owner bound; answers whether it was stored. Counting and inserting
   * are one decision for every replica: the owner's advisory lock, taken in the transaction, makes
   * concurrent starts (on any replica) count one after another, so the cap is exact. A task whose
   * replica died counts until its deadline, after which it reads as failed. The DELETE reads the
   * table as it was before the INSERT (one snapshot), so it keeps the newest
   * `maxKeptPerPrincipal - 1` rows besides the new one.
   */
  async create(owner: string, task: NeutralTask, maxRunning: number): Promise<boolean> {
    return this.#sequelize.transaction(async (transaction) => {
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:lock))', { replacements: { lock: `svc-a2a-running:${owner}` }, transaction });
      const created = await this.#sequelize.query(
        `WITH created AS (
           INSERT INTO a2a_tasks (id, owner, context_id, skill, state, status_message, artifacts, history, deadline_at, created_at, updated_at)
           SELECT :id, :owner, :contextId, :skill, :state, NULL, '[]', :history, clock_timestamp() + make_interval(secs => :deadlineSeconds), clock_timestamp(), clock_timestamp()
           WHERE (SELECT count(*) FROM a2a_tasks WHERE owner = :owner AND state IN ('submitted', 'working') AND deadline_at > clock_timestamp()) < :maxRunning
           RETURNING id
         ), pruned AS (
           DELETE FROM a2a_tasks WHERE EXISTS (SELECT 1 FROM created) AND id IN (
             SELECT id FROM a2a_tasks WHERE owner = :owner ORDER BY created_at DESC OFFSET ${a2aLimits.maxKeptPerPrincipal - 1}
           )
         )
         SELECT id FROM created`,
        {
          replacements: {
            id: task.id,
            owner,
            contextId: task.contextId,
            skill: task.skill,
            state: task.state,
            history: JSON.stringify(task.history),
            deadlineSeconds: a2aLimits.taskDeadlineMs / 1000,
            maxRunning,
          },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      return created.length > 0;
    });
  }

  /** Ends a task, unless it already ended (a cancel won the race): answers whether this call ended it. */
  async finish(owner: string, id: string, state: TaskState, statusMessage: NeutralMessage | undefined, artifacts: NeutralArtifact[]): Promise<boolean> {
    const [rows] = (await this.#sequelize.query(
      `UPDATE a2a_tasks SET state = :state, status_message = :statusMessage, artifacts = :artifacts, updated_at = clock_timestamp()
       WHERE id = :id AND owner = :owner AND state IN ('submitted', 'working') RETURNING id`,
      {
        replacements: {
          id,
          owner,
          state,
          statusMessage: statusMessage ? JSON.stringify(statusMessage) : null,
          artifacts: JSON.stringify(storable(artifacts)),
        },
      },
    )) as [unknown[], unknown];
    return rows.length > 0;
  }

  async get(owner: string, id: string): Promise<NeutralTask | undefined> {
    const [row] = await this.#sequelize.query<TaskRow>(
      `SELECT id, context_id, skill, state, status_message, artifacts, history, cancel_requested, deadline_at < clock_timestamp() AS overdue, updated_at
       FROM a2a_tasks WHERE id = :id AND owner = :owner AND ${FRESH}`,
      { replacements: { id, owner }, type: QueryTypes.SELECT },
    );
    return row ? taskOf(row) : undefined;
  }

  /**
   * Cancels a running task: it is `canceled` at once for every reader, and the replica running it
   * aborts the work when it next looks (`cancelRequested`). Answers the task as it now stands, or
   * undefined when there is none for this owner.
   */
  async cancel(owner: string, id: string, statusMessage: NeutralMessage): Promise<NeutralTask | undefined> {
    await this.#sequelize.query(
      `UPDATE a2a_tasks SET state = 'canceled', cancel_requested = true, status_message = :statusMessage, updated_at = clock_timestamp()
       WHERE id = :id AND owner = :owner AND state IN ('submitted', 'working') AND deadline_at >= clock_timestamp() AND ${FRESH}`,
      { replacements: { id, owner, statusMessage: JSON.stringify(statusMessage) } },
    );
    return this.get(owner, id);
  }

  /** Whether a cancel was asked for the task (on any replica). */
  async cancelRequested(id: string): Promise<boolean> {
    const [row] = await this.#sequelize.query<{ cancel_requested: boolean }>('SELECT cancel_requested FROM a2a_tasks WHERE id = :id', {
      replacements: { id },
      type: QueryTypes.SELECT,
    });
    return row?.cancel_requested ?? true;
  }

  /** Deletes tasks past their retention, a bounded batch a turn (the next turn takes the rest). */
  async prune(): Promise<void> {
    await this.#sequelize.query(
      `DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks WHERE created_at <= clock_timestamp() - make_interval(hours => ${a2aLimits.retentionHours}) LIMIT 5000)`,
    );
  }
}
