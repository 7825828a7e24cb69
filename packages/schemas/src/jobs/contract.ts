import { cursorPaging } from '../cursor-paging.ts';
import { defineContract, defineRoute } from '../route.ts';
import { jobLimits as limits, batchJobRequestSchemaId } from './limits.ts';
import { BatchJob, BatchJobListResponse, BatchJobRequest, BatchJobResult, finishedJobStatuses, JobIdParams, JobPage, JobSubmitHeaders } from './records.ts';

/** Jobs belong to registered agents (and the operator): the shared demo and open-auth principals are refused with 403 `principal_not_allowed`. */
const jobsAuth = (scope: 'jobs:read' | 'jobs:write') => ({ kind: 'scoped', scopes: [scope], principals: ['operator', 'agent'] }) as const;
const common = { surface: 'base', tags: ['jobs'] } as const;
/** A job's progress for an MCP progress report: items finished of the total, done once the job is. */
const readJobProgress = (job: BatchJob) => ({
  done: (finishedJobStatuses as readonly string[]).includes(job.status),
  progress: job.progress.succeeded + job.progress.failed,
  total: job.progress.total,
  message: job.status,
});
const notFound = "Another principal's job, an unknown id and a job past retention are all 404 `job_not_found`.";

export const jobsContract = defineContract({
  submit: defineRoute({
    ...common,
    auth: jobsAuth('jobs:write'),
    method: 'POST',
    path: '/v1/jobs',
    summary: 'Submit a batch job (1..8 items of one operation); answers 202 with the queued job',
    description:
      `Body \`${batchJobRequestSchemaId}\` with one operation and 1..${limits.maxItems} items, each checked with that operation's own request schema (a bad item is a 422 naming it; nothing is queued). ` +
      `Body at most ${limits.maxRequestBytes} bytes (413). Paid operations (chat) are not accepted. \`stream\` in an item is ignored: results are JSON. ` +
      "`Idempotency-Key` is required (422 `validation_failed` naming the header when absent). Keys are scoped to the principal and kept 24 hours (Stripe's semantics): " +
      'the same key with the same body answers the first 202 again, with the same job id and `Idempotent-Replayed: true`, and queues nothing; the same key with another body is 409 `idempotency_conflict`; ' +
      'while the first request with that key is still being admitted, a second gets 409 `idempotency_in_progress` (retryable, `Retry-After`). A refused submission (429, 422) stores nothing, so the same key may be retried. ' +
      `Active (queued or running) caps, counted over every replica: ${limits.maxActivePerPrincipal} jobs and ${limits.maxActiveItemsPerPrincipal} items per principal, ${limits.maxActiveGlobal} jobs and ${limits.maxActiveItemsGlobal} items in all; ` +
      'past one, 429 `jobs_active_limit:<which>` with `Retry-After`. Finished jobs are kept until the earlier of the result TTL (86400 s) and the row caps ' +
      `(${limits.maxRetainedPerPrincipal} per principal, ${limits.maxRetainedGlobal} in all; the oldest finished jobs go first). ` +
      `validate_json items: a schema of at most ${limits.validateJsonSchemaMaxChars} characters of JSON nested at most ${limits.validateJsonSchemaMaxDepth} levels, and a document of at most ${limits.validateJsonDocumentMaxChars} characters (422 naming the item); ` +
      `patterns run on RE2 (a pattern with lookaround or backreferences is the item error \`json_schema_invalid\`), and validation runs in a worker thread under a ${limits.validateJsonDeadlineMs} ms deadline (past it, the item error \`json_validation_too_costly\`). ` +
      `calculate items run in the same worker threads under a ${limits.calculateDeadlineMs} ms deadline (past it, the item error \`calculate_too_costly\`).`,
    headers: JobSubmitHeaders,
    body: BatchJobRequest,
    bodyLimitBytes: limits.maxRequestBytes,
    errors: [409, 413, 429],
    responses: { 202: BatchJob },
  }),
  list: defineRoute({
    ...common,
    auth: jobsAuth('jobs:read'),
    method: 'GET',
    path: '/v1/jobs',
    summary: "Your jobs, newest first, by cursor: status, attempts and progress (the results are at each job's /result)",
    description:
      'The jobs still kept: active ones, and finished ones until the result TTL or the retention cap drops them ' +
      `(${limits.maxRetainedPerPrincipal} finished per principal), so the list is short and each page reads at most \`limit\` rows. ` +
      '`status` keeps one status. Pages by an opaque keyset cursor: `next_cursor` of one page is the `cursor` of the next; a job submitted meanwhile is on no later page.',
    query: JobPage,
    responses: { 200: BatchJobListResponse },
    paging: cursorPaging,
  }),
  get: defineRoute({
    ...common,
    auth: jobsAuth('jobs:read'),
    method: 'GET',
    path: '/v1/jobs/:job_id',
    summary: "A job's status, attempts, timestamps and per-item progress",
    description:
      'Statuses: queued -> running -> completed | failed; queued -> cancelled. A job whose server died while running it (its lease ran out) goes back to queued and is tried again, ' +
      `up to ${limits.maxAttempts} attempts; then it fails with \`job_attempts_exhausted\`. Items that finished in an earlier attempt keep their outcome and are not run again. ${notFound}`,
    params: JobIdParams,
    errors: [404],
    responses: { 200: BatchJob },
    // An MCP tool call with a progressToken follows the job until it is finished, reporting its items.
    agent: { progress: { poll: { intervalMs: 250, read: readJobProgress } } },
  }),
  cancel: defineRoute({
    ...common,
    auth: jobsAuth('jobs:write'),
    method: 'POST',
    path: '/v1/jobs/:job_id/cancel',
    summary: 'Cancel a queued job (immediate and final); any other status is 409 with the current status',
    description:
      'A cancelled job never starts: cancel and claim take the same row lock, so a job is either cancelled or run, never both. Cancelling an already cancelled job answers it again (200). ' +
      `A running, completed or failed job is 409 \`job_not_cancellable:<status>\`. ${notFound}`,
    params: JobIdParams,
    errors: [404, 409],
    responses: { 200: BatchJob },
  }),
  result: defineRoute({
    ...common,
    auth: jobsAuth('jobs:read'),
    method: 'GET',
    path: '/v1/jobs/:job_id/result',
    summary: 'Per-item results of a finished job (an item may fail alone with its own code)',
    description: `409 \`job_not_finished:<status>\` while queued or running, 409 \`job_cancelled\` for a cancelled job (nothing ran). ${notFound}`,
    params: JobIdParams,
    errors: [404, 409],
    responses: { 200: BatchJobResult },
  }),
});
