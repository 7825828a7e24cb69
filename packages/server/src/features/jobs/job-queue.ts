import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { JobItemOutcome } from '@svc/schemas';
import type { JobsConfig } from './jobs-config.ts';
import type { JobRow } from './job-row.ts';
import type { JobStore } from './job-store.ts';

/** A claimed job: the row, and the lease token every later write is fenced by. */
export interface ClaimedJob {
  row: JobRow;
  lease: string;
}

/**
 * The PostgreSQL queue (plain SQL, `FOR UPDATE SKIP LOCKED`): any replica claims any queued job,
 * holds it by a lease it renews, and every write it makes names its lease, so a runner whose
 * lease ran out (and whose job someone else now runs) changes nothing.
 */
export class JobQueue {
  private readonly sequelize: Sequelize;
  private readonly config: JobsConfig;
  private readonly store: JobStore;

  constructor(sequelize: Sequelize, config: JobsConfig, store: JobStore) {
    this.sequelize = sequelize;
    this.config = config;
    this.store = store;
  }

  /**
   * Jobs whose runner died (lease expired): back to queued while attempts remain, else failed
   * with `job_attempts_exhausted`. Items that finished keep their outcomes. One statement: it runs
   * at every wake (the idle backstop reads first, `hasWork`).
   */
  async reapExpiredLeases(): Promise<void> {
    const reaped = await this.sequelize.query<{ status: string }>(
      `UPDATE svc_jobs SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
         error_code = CASE WHEN attempts >= max_attempts THEN 'job_attempts_exhausted' ELSE error_code END,
         error_message = CASE WHEN attempts >= max_attempts
           THEN 'The job''s runner stopped (server gone or lease expired) on each of its ' || max_attempts || ' attempts.' ELSE error_message END,
         finished_at = CASE WHEN attempts >= max_attempts THEN now() ELSE finished_at END,
         expires_at = CASE WHEN attempts >= max_attempts THEN now() + make_interval(secs => :ttlSeconds) ELSE expires_at END,
         lease_owner = NULL, lease_expires_at = NULL, current_item = NULL
       WHERE status = 'running' AND lease_expires_at < now() RETURNING status`,
      { replacements: { ttlSeconds: this.config.resultTtlSeconds }, type: QueryTypes.SELECT },
    );
    // A job failed here is finished: retention's row caps apply now, as when a runner ends one
    // (housekeeping prunes only what passed its TTL).
    if (reaped.some((row) => row.status === 'failed')) await this.store.pruneFinished();
  }

  /** Whether a job waits or a lease ran out: the backstop's one read, before any write. */
  async hasWork(): Promise<boolean> {
    const [row] = await this.sequelize.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM svc_jobs WHERE status = 'queued')
         OR EXISTS (SELECT 1 FROM svc_jobs WHERE status = 'running' AND lease_expires_at < now()) AS found`,
      { type: QueryTypes.SELECT },
    );
    return Boolean(row?.found);
  }

  /** Claims the oldest queued job, counting an attempt; undefined when none is waiting. */
  async claim(): Promise<ClaimedJob | undefined> {
    const lease = randomBytes(12).toString('base64url');
    const [row] = await this.sequelize.query<JobRow>(
      `UPDATE svc_jobs SET status = 'running', attempts = attempts + 1, started_at = now(), lease_owner = :lease,
         lease_expires_at = now() + make_interval(secs => :leaseSeconds)
       WHERE id = (SELECT id FROM svc_jobs WHERE status = 'queued' ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING *`,
      { replacements: { lease, leaseSeconds: this.config.leaseSeconds }, type: QueryTypes.SELECT },
    );
    return row ? { row, lease } : undefined;
  }

  /** Extends the lease; false when it was lost (the job was reaped and maybe claimed elsewhere). */
  async renew(job: ClaimedJob): Promise<boolean> {
    const rows = await this.sequelize.query(
      `UPDATE svc_jobs SET lease_expires_at = now() + make_interval(secs => :leaseSeconds) WHERE id = :id AND lease_owner = :lease AND status = 'running' RETURNING id`,
      { replacements: { id: job.row.id, lease: job.lease, leaseSeconds: this.config.leaseSeconds }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Marks the item being run, for progress. */
  async startItem(job: ClaimedJob, index: number): Promise<boolean> {
    const rows = await this.sequelize.query(`UPDATE svc_jobs SET current_item = :index WHERE id = :id AND lease_owner = :lease RETURNING id`, {
      replacements: { id: job.row.id, lease: job.lease, index },
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  /**
   * Appends one item's outcome and marks the next item as the one running, in one write (each
   * commit waits for the disk, so the runner makes one per item); false when the lease was lost.
   */
  async recordOutcome(job: ClaimedJob, outcome: JobItemOutcome, bytes: number, nextItem: number | null): Promise<boolean> {
    const rows = await this.sequelize.query(
      `UPDATE svc_jobs SET outcomes = outcomes || jsonb_build_array(:outcome::jsonb), result_bytes = result_bytes + :bytes, current_item = :nextItem
       WHERE id = :id AND lease_owner = :lease AND status = 'running' RETURNING id`,
      { replacements: { id: job.row.id, lease: job.lease, outcome: JSON.stringify(outcome), bytes, nextItem }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /**
   * Ends the job (completed, or failed with a code) and applies retention in the same
   * transaction (one commit); false when the lease was lost.
   */
  async finish(job: ClaimedJob, end: { status: 'completed' } | { status: 'failed'; code: string; message: string }): Promise<boolean> {
    return this.sequelize.transaction(async (transaction) => {
      const rows = await this.sequelize.query(
        `UPDATE svc_jobs SET status = :status, error_code = :code, error_message = :message, finished_at = now(), expires_at = now() + make_interval(secs => :ttlSeconds),
           lease_owner = NULL, lease_expires_at = NULL, current_item = NULL
         WHERE id = :id AND lease_owner = :lease AND status = 'running' RETURNING id`,
        {
          replacements: {
            id: job.row.id,
            lease: job.lease,
            status: end.status,
            code: end.status === 'failed' ? end.code : null,
            message: end.status === 'failed' ? end.message : null,
            ttlSeconds: this.config.resultTtlSeconds,
          },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      if (rows.length > 0) await this.store.pruneFinished(transaction);
      return rows.length > 0;
    });
  }

  /** Gives a job back at shutdown: queued again at once (its attempt stays counted). */
  async release(job: ClaimedJob): Promise<void> {
    await this.sequelize.query(
      `UPDATE svc_jobs SET status = CASE WHEN attempts >= max_attempts THEN 'running' ELSE 'queued' END,
         lease_owner = CASE WHEN attempts >= max_attempts THEN lease_owner ELSE NULL END,
         lease_expires_at = CASE WHEN attempts >= max_attempts THEN now() ELSE NULL END, current_item = NULL
       WHERE id = :id AND lease_owner = :lease AND status = 'running'`,
      { replacements: { id: job.row.id, lease: job.lease } },
    );
  }
}
