import type { Logger } from 'pino';
import type { JobItemOutcome } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { firstBackstopDelayMs } from '../../db/backstop.ts';
import { Wake } from '../../db/wake.ts';
import { isServiceError } from '../../service-error.ts';
import type { PdfService } from '../pdf/index.ts';
import type { JobQueue, ClaimedJob } from './job-queue.ts';
import { type RunJobItemDeps, runJobItem } from './run-item.ts';

/** An item's failure as its outcome: a stable code and a safe message, never an internal one. */
function failedOutcome(index: number, error: unknown): JobItemOutcome {
  if (isServiceError(error)) return { index, status: 'failed', error: { code: error.code, message: error.message } };
  return { index, status: 'failed', error: { code: 'internal_error', message: 'The item failed unexpectedly.' } };
}

/** What the workers reach for: the queue's database and settings, and what each item's run needs. */
type JobWorkersDeps = Pick<ServerDeps, 'database'> & RunJobItemDeps;

/**
 * The job runners of one server process: at most `workers` jobs at a time, claimed from the
 * shared queue whenever a slot is free. A submission on any replica wakes them at once (`Wake`:
 * LISTEN/NOTIFY on `svc_jobs`, in process on the embedded database); the slow backstop poll
 * (`SVC_JOBS_POLL_INTERVAL_MS`, db/backstop.ts) finds only what nobody announced, a lease that
 * ran out on a replica that died. `close` stops claiming, lets running jobs finish for a while, then aborts and
 * releases the rest.
 */
export class JobWorkers {
  private readonly deps: JobWorkersDeps;
  private readonly pdf: PdfService;
  private readonly queue: JobQueue;
  private readonly log: Logger;
  private readonly running = new Map<string, { job: ClaimedJob; abort: AbortController; done: Promise<void> }>();
  private stopped = false;
  private claiming = false;
  private wakeAgain = false;
  private readonly wakeup: Wake;

  constructor(deps: JobWorkersDeps, pdf: PdfService, queue: JobQueue) {
    this.deps = deps;
    this.pdf = pdf;
    this.queue = queue;
    this.log = deps.log.child({ feature: 'jobs' });
    this.wakeup = new Wake({
      channel: 'svc_jobs',
      database: deps.database,
      url: deps.config.databaseUrl,
      backstopMs: deps.config.jobs.pollIntervalMs,
      ...(deps.database.kind === 'embedded' ? { firstBackstopMs: firstBackstopDelayMs(deps.config.jobs.leaseSeconds) } : {}),
      onWake: (reason) => (reason === 'backstop' ? this.lookAtBackstop() : this.wake()),
      onError: (error) => this.log.warn({ err: error }, 'the job queue listener lost its connection; polling every second until it is back'),
    });
  }

  /** Listens for submissions (a process that runs no jobs listens to nothing) and claims what is waiting. */
  start(): void {
    if (this.deps.config.jobs.workers === 0) return;
    this.wake();
    void this.wakeup.start();
  }

  /**
   * A job was queued (or put back) and committed: wakes this process's workers and every other
   * replica's. A failed notification is logged; the backstop poll still finds the job.
   */
  announce(): void {
    this.wakeup.announce().catch((error: unknown) => {
      if (!this.stopped) this.log.warn({ err: error }, 'announcing a queued job failed; other replicas find it at their backstop poll');
    });
  }

  /**
   * The backstop's turn: nothing was announced, so one read says whether a lease ran out or a job
   * waits before the claim loop's writes run (idle, this read is all the queue sends).
   */
  private lookAtBackstop(): void {
    if (this.stopped || this.deps.config.jobs.workers === 0 || this.claiming) return;
    this.queue.hasWork().then(
      (found) => {
        if (found) this.wake();
      },
      (error: unknown) => {
        if (!this.stopped) this.log.warn({ err: (error as Error).message }, 'the job queue backstop failed; retrying at the next poll');
      },
    );
  }

  /** Claims jobs while slots are free; one claim loop at a time per process. */
  wake(): void {
    if (this.stopped || this.deps.config.jobs.workers === 0) return;
    if (this.claiming) {
      this.wakeAgain = true;
      return;
    }
    this.claiming = true;
    void (async () => {
      try {
        do {
          this.wakeAgain = false;
          await this.queue.reapExpiredLeases();
          while (!this.stopped && this.running.size < this.deps.config.jobs.workers) {
            const job = await this.queue.claim();
            if (!job) break;
            this.launch(job);
          }
        } while (this.wakeAgain && !this.stopped);
      } catch (error) {
        if (!this.stopped) this.log.warn({ err: (error as Error).message }, 'job claim failed; retrying at the next poll');
      } finally {
        this.claiming = false;
      }
    })();
  }

  private launch(job: ClaimedJob): void {
    const abort = new AbortController();
    const done = this.run(job, abort.signal)
      .catch((error: unknown) => {
        if (!this.stopped)
          this.log.error({ err: (error as Error).message, job: job.row.id }, 'job runner failed; the lease will expire and the job be retried');
      })
      .finally(() => {
        this.running.delete(job.row.id);
        this.wake();
      });
    this.running.set(job.row.id, { job, abort, done });
  }

  /** Renews the lease every third of its length; a lost lease aborts the run. */
  private heartbeat(job: ClaimedJob, abort: () => void): () => void {
    const timer = setInterval(
      () => {
        this.queue.renew(job).then(
          (held) => {
            if (!held) abort();
          },
          () => {},
        );
      },
      Math.max(100, (this.deps.config.jobs.leaseSeconds * 1000) / 3),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  private async run(job: ClaimedJob, signal: AbortSignal): Promise<void> {
    const config = this.deps.config.jobs;
    const lost = new AbortController();
    const itemSignal = AbortSignal.any([signal, lost.signal]);
    const stopHeartbeat = this.heartbeat(job, () => lost.abort());
    try {
      const done = new Set(job.row.outcomes.map((outcome) => outcome.index));
      let bytes = Number(job.row.result_bytes);
      // Items that finished in an earlier attempt are never run again.
      const pending = Array.from({ length: job.row.item_count }, (_, index) => index).filter((index) => !done.has(index));
      if (pending.length > 0 && !(await this.queue.startItem(job, pending[0]!))) return;
      for (const [position, index] of pending.entries()) {
        if (itemSignal.aborted) return;
        let outcome: JobItemOutcome;
        try {
          const result = await runJobItem(this.deps, this.pdf, job.row.operation, job.row.items[index], {
            jobId: job.row.id,
            index,
            principal: { id: job.row.principal_id, kind: job.row.principal_kind },
            signal: itemSignal,
            log: this.log,
          });
          outcome = { index, status: 'succeeded', result } as JobItemOutcome;
        } catch (error) {
          // Stopped by shutdown or a lost lease: the item did not fail, it was interrupted.
          if (itemSignal.aborted) return;
          outcome = failedOutcome(index, error);
        }
        const size = Buffer.byteLength(JSON.stringify(outcome));
        if (bytes + size > config.maxResultBytes) {
          await this.queue.finish(job, {
            status: 'failed',
            code: 'job_result_too_large',
            message: `The results would take ${bytes + size} bytes; at most ${config.maxResultBytes} are stored (item ${index} was not stored). Split the job or ask for less per item.`,
          });
          return;
        }
        if (!(await this.queue.recordOutcome(job, outcome, size, pending[position + 1] ?? null))) return;
        bytes += size;
      }
      await this.queue.finish(job, { status: 'completed' });
    } finally {
      stopHeartbeat();
    }
  }

  /** Stops claiming; waits up to `graceMs` for running jobs, then aborts and releases them. */
  async close(graceMs: number): Promise<void> {
    this.stopped = true;
    const stopListening = this.wakeup.close();
    const all = () => Promise.all([...this.running.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const outcome = await Promise.race([all().then(() => 'done' as const), graceOver]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      const left = [...this.running.values()];
      for (const entry of left) entry.abort.abort();
      await all();
      await Promise.all(left.map((entry) => this.queue.release(entry.job).catch(() => {})));
      // Put back in the queue: another replica takes them now rather than at its backstop poll.
      if (left.length > 0 && this.deps.database.kind === 'postgres')
        await this.deps.database.sequelize.query("SELECT pg_notify('svc_jobs', '')").catch(() => {});
    }
    await stopListening;
  }
}
