import { jobsContract, pathFor, type BatchJob } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { listAnswer } from '../../db/keyset-page.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { requestFingerprint } from '../../http/canonical-json.ts';
import { runIdempotent } from '../../http/idempotency.ts';
import { ServiceError } from '../../service-error.ts';
import type { JobStore } from './job-store.ts';
import { warmCalculator } from './operations/job-operations-pool.ts';
import { toBatchJob, toBatchJobResult } from './job-row.ts';

/** How long a claimed Idempotency-Key may stay unanswered before a retry takes it over. */
const IDEMPOTENCY_LOCK_SECONDS = 30;

export function createJobsHandlers(deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'testSeams'>, store: JobStore, onQueued: () => void) {
  const { sequelize } = deps.database;
  const config = deps.config.jobs;
  return defineHandlers(jobsContract, {
    async submit({ headers, body }, request) {
      if (body.operation === 'calculate') warmCalculator({ log: deps.log, workerModule: deps.testSeams?.jobOperationsWorkerModule });
      const answer = await runIdempotent<BatchJob>(
        sequelize,
        { principalId: request.principal.id, routeId: 'jobs.submit', key: headers['idempotency-key'], fingerprint: requestFingerprint('jobs.submit', body) },
        { ttlSeconds: config.idempotencyTtlSeconds, lockSeconds: IDEMPOTENCY_LOCK_SECONDS },
        async (transaction) => {
          const row = await store.insert(request.principal, body, transaction);
          return { status: 202, body: toBatchJob(row), headers: { location: pathFor(jobsContract.get, { job_id: row.id }) } };
        },
      );
      if (answer.headers['idempotent-replayed'] === undefined) onQueued();
      return { status: 202, body: answer.body, headers: answer.headers };
    },
    async list({ query }, request) {
      const page = await store.list(request.principal.id, query);
      return { status: 200, body: { object: 'list', ...listAnswer(page, page.rows.map(toBatchJob)) } };
    },
    async get({ params }, request) {
      return { status: 200, body: toBatchJob(await store.find(request.principal.id, params.job_id)) };
    },
    async cancel({ params }, request) {
      return { status: 200, body: toBatchJob(await store.cancel(request.principal.id, params.job_id)) };
    },
    async result({ params }, request) {
      const row = await store.find(request.principal.id, params.job_id, '*');
      if (row.status === 'cancelled') throw new ServiceError('job_cancelled', 'The job was cancelled before it ran; it has no result.');
      if (row.status !== 'completed' && row.status !== 'failed') {
        throw new ServiceError(`job_not_finished:${row.status}`, `The job is ${row.status}; its result exists once it has completed or failed.`, {
          retryAfterSeconds: 1,
        });
      }
      return { status: 200, body: toBatchJobResult(row) };
    },
  });
}
