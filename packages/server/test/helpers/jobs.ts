import type { SvcClient } from '@svc/client';
import type { BatchJob, BatchJobRequest } from '@svc/schemas';
import { waitUntil } from '@svc/testing/wait-until';

/** A batch job request of `count` calculate items. */
export function calculateJob(count: number, expression = '1 + 1'): BatchJobRequest {
  return { schema: 'svc.batch-job-request.v1', operation: 'calculate', items: Array.from({ length: count }, () => ({ expression })) };
}

/** POSTs a job with raw fetch, so a test controls every header and byte. */
export function postJob(baseUrl: string, token: string | undefined, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
}

/** Reads the job every `intervalMs` until `done` accepts it; past the deadline, the error shows the job as last read. */
export function pollJobUntil(client: SvcClient, jobId: string, done: (job: BatchJob) => boolean, timeoutMs: number, intervalMs = 50): Promise<BatchJob> {
  let last: BatchJob | undefined;
  return waitUntil(
    () => `job ${jobId} to get there (last read: ${JSON.stringify(last)})`,
    async () => {
      last = await client.jobs.get({ params: { job_id: jobId } });
      return done(last) && last;
    },
    { timeoutMs, intervalMs },
  );
}
