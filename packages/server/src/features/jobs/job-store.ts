import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { BatchJobBody, JobStatus, Principal } from '@svc/schemas';
import { keysetPage, NEWEST_FIRST, type KeysetPage } from '../../db/keyset-page.ts';
import { ServiceError } from '../../service-error.ts';
import type { JobsConfig } from './jobs-config.ts';
import { JOB_SUMMARY_COLUMNS, type JobRow } from './job-row.ts';

/** Serialises admissions over every replica, so two submissions never both slip under a cap. */
const ADMISSION_LOCK = 0x5_1_0b5; // arbitrary, fixed: the jobs admission advisory lock
/** Serialises retention deletes over every replica. */
const PRUNE_LOCK = 0x5_1_0b6;

const FINISHED = `('completed', 'failed', 'cancelled')`;
/** How soon a refused caller should try again: jobs take seconds. */
const RETRY_AFTER_SECONDS = 2;

export const newJobId = () => `job_${randomBytes(18).toString('base64url')}`;

interface ActiveCounts {
  principal_jobs: string;
  principal_items: string;
  global_jobs: string;
  global_items: string;
}

const notFound = (jobId: string) => new ServiceError('job_not_found', `No job ${jobId} of yours (unknown, another principal's, or past retention).`);

/**
 * The jobs' rows: admission and insert, the caller's reads, cancel and retention. Built once by the
 * feature and given to the handlers and the queue (whose claims prune as they finish jobs).
 */
export class JobStore {
  readonly #sequelize: Sequelize;
  readonly #config: JobsConfig;

  constructor(sequelize: Sequelize, config: JobsConfig) {
    this.#sequelize = sequelize;
    this.#config = config;
  }

  /**
   * Admits and stores a job in the caller's transaction: takes the admission lock, counts the
   * active (queued or running) jobs and items, refuses past any cap with 429, inserts the row.
   */
  async insert(principal: Principal, body: BatchJobBody, transaction: Transaction): Promise<JobRow> {
    const sequelize = this.#sequelize;
    const config = this.#config;
    await sequelize.query('SELECT pg_advisory_xact_lock(:lock)', { replacements: { lock: ADMISSION_LOCK }, transaction });
    const [counts] = await sequelize.query<ActiveCounts>(
      `SELECT count(*) FILTER (WHERE principal_id = :principalId) AS principal_jobs, coalesce(sum(item_count) FILTER (WHERE principal_id = :principalId), 0) AS principal_items,
              count(*) AS global_jobs, coalesce(sum(item_count), 0) AS global_items
       FROM svc_jobs WHERE status IN ('queued', 'running')`,
      { replacements: { principalId: principal.id }, type: QueryTypes.SELECT, transaction },
    );
    const items = body.items.length;
    const caps = [
      ['principal_jobs', Number(counts!.principal_jobs) + 1, config.maxActivePerPrincipal, 'active jobs for one principal'],
      ['principal_items', Number(counts!.principal_items) + items, config.maxActiveItemsPerPrincipal, 'active items for one principal'],
      ['global_jobs', Number(counts!.global_jobs) + 1, config.maxActiveGlobal, 'active jobs on this service'],
      ['global_items', Number(counts!.global_items) + items, config.maxActiveItemsGlobal, 'active items on this service'],
    ] as const;
    for (const [which, wouldBe, cap, what] of caps) {
      if (wouldBe > cap) {
        throw new ServiceError(
          `jobs_active_limit:${which}`,
          `At most ${cap} ${what} (queued or running); this job would make ${wouldBe}. Retry when one finishes.`,
          {
            retryAfterSeconds: RETRY_AFTER_SECONDS,
            retryable: true,
          },
        );
      }
    }
    const [row] = await sequelize.query<JobRow>(
      `INSERT INTO svc_jobs (id, principal_id, principal_kind, operation, items, item_count, status, max_attempts)
       VALUES (:id, :principalId, :principalKind, :operation, :items::jsonb, :itemCount, 'queued', :maxAttempts) RETURNING ${JOB_SUMMARY_COLUMNS}`,
      {
        replacements: {
          id: newJobId(),
          principalId: principal.id,
          principalKind: principal.kind,
          operation: body.operation,
          items: JSON.stringify(body.items),
          itemCount: items,
          maxAttempts: config.maxAttempts,
        },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** The caller's job, or 404: another principal's job and one past its TTL look the same as none. */
  async find(principalId: string, jobId: string, columns = JOB_SUMMARY_COLUMNS): Promise<JobRow> {
    const [row] = await this.#sequelize.query<JobRow>(
      `SELECT ${columns} FROM svc_jobs WHERE id = :jobId AND principal_id = :principalId AND (expires_at IS NULL OR expires_at > now())`,
      { replacements: { jobId, principalId }, type: QueryTypes.SELECT },
    );
    if (!row) throw notFound(jobId);
    return row;
  }

  /**
   * A page of the caller's jobs still kept, newest first, by a (created_at, id) keyset cursor. The
   * caller's rows are few (active caps plus the retention cap of finished ones), and the page reads
   * at most `limit + 1` of them.
   */
  async list(principalId: string, options: { limit: number; cursor?: string | undefined; status?: JobStatus | undefined }): Promise<KeysetPage<JobRow>> {
    return keysetPage<JobRow>(
      this.#sequelize,
      {
        select: JOB_SUMMARY_COLUMNS,
        from: 'svc_jobs',
        where: ['principal_id = :principalId', '(expires_at IS NULL OR expires_at > now())', options.status !== undefined && 'status = :status'],
        replacements: { principalId, status: options.status ?? null },
        keys: NEWEST_FIRST,
      },
      options,
    );
  }

  /**
   * Cancels a queued job. The UPDATE takes the row lock the claim takes, and re-checks the status
   * once it holds it, so a job is cancelled or claimed, never both.
   */
  async cancel(principalId: string, jobId: string): Promise<JobRow> {
    const [cancelled] = await this.#sequelize.query<JobRow>(
      `UPDATE svc_jobs SET status = 'cancelled', cancelled_at = now(), finished_at = now(), expires_at = now() + make_interval(secs => :ttlSeconds)
       WHERE id = :jobId AND principal_id = :principalId AND status = 'queued' RETURNING ${JOB_SUMMARY_COLUMNS}`,
      { replacements: { jobId, principalId, ttlSeconds: this.#config.resultTtlSeconds }, type: QueryTypes.SELECT },
    );
    if (cancelled) {
      await this.pruneFinished();
      return cancelled;
    }
    const current = await this.find(principalId, jobId);
    if (current.status === 'cancelled') return current;
    throw new ServiceError(`job_not_cancellable:${current.status}`, `Only queued jobs can be cancelled; this one is ${current.status}.`);
  }

  /** Whether a finished job is past its TTL (housekeeping prunes only then). */
  async hasExpired(): Promise<boolean> {
    const rows = await this.#sequelize.query(`SELECT 1 FROM svc_jobs WHERE status IN ${FINISHED} AND expires_at <= now() LIMIT 1`, {
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  /**
   * Retention: a finished job is kept until the earlier of its TTL and the row caps (per principal
   * and overall), dropping the oldest finished first. Active jobs are never dropped.
   */
  async pruneFinished(transaction?: Transaction): Promise<void> {
    if (!transaction) return this.#sequelize.transaction((own) => this.pruneFinished(own));
    const sequelize = this.#sequelize;
    const config = this.#config;
    // One pruner at a time over every replica: two deleting overlapping rows could deadlock.
    await sequelize.query('SELECT pg_advisory_xact_lock(:lock)', { replacements: { lock: PRUNE_LOCK }, transaction });
    await sequelize.query(`DELETE FROM svc_jobs WHERE status IN ${FINISHED} AND expires_at <= now()`, { transaction });
    await sequelize.query(
      `DELETE FROM svc_jobs WHERE id IN (
         SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY principal_id ORDER BY finished_at DESC, id DESC) AS place
                         FROM svc_jobs WHERE status IN ${FINISHED}) ranked
         WHERE place > :kept)`,
      { replacements: { kept: config.maxRetainedPerPrincipal }, transaction },
    );
    await sequelize.query(
      `DELETE FROM svc_jobs WHERE id IN (
         SELECT id FROM svc_jobs WHERE status IN ${FINISHED} ORDER BY finished_at DESC, id DESC OFFSET :kept)`,
      { replacements: { kept: config.maxRetainedGlobal }, transaction },
    );
  }
}
