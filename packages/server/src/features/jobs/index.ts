import type { ServerDeps } from '../../deps.ts';
import { pruneIdempotencyKeys } from '../../http/idempotency.ts';
import type { Feature } from '../feature.ts';
import type { PdfService } from '../pdf/index.ts';
import { createJobsHandlers } from './handlers.ts';
import { JobQueue } from './job-queue.ts';
import { JobStore } from './job-store.ts';
import { JobWorkers } from './job-workers.ts';

/**
 * Batch jobs: the routes, this process's runners over the shared PostgreSQL queue, and the
 * housekeeping that applies retention (jobs and idempotency keys).
 */
export function createJobsFeature(
  deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'models' | 'publicUrls' | 'scheduler' | 'testSeams' | 'usage'>,
  given: { pdf: PdfService },
) {
  const store = new JobStore(deps.database.sequelize, deps.config.jobs);
  const queue = new JobQueue(deps.database.sequelize, deps.config.jobs, store);
  const workers = new JobWorkers(deps, given.pdf, queue);
  workers.start();
  // The row caps are applied when a job finishes; what is left to the clock is the TTL, and readers
  // already skip expired jobs: a read says whether one expired before the pruning transaction (five
  // statements) runs, since idle it nearly never has (issue 42).
  deps.scheduler.every('jobs.prune', deps.config.jobs.housekeepingIntervalMs, () =>
    Promise.all([store.hasExpired().then((expired) => (expired ? store.pruneFinished() : undefined)), pruneIdempotencyKeys(deps.database.sequelize)]),
  );
  return {
    handlers: { jobs: createJobsHandlers(deps, store, () => workers.announce()) },
    close: () => workers.close(Math.max(0, deps.config.shutdownTimeoutMs / 2)),
  } satisfies Feature<'jobs'>;
}
