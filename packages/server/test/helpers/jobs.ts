import type { BatchJobRequest } from '@svc/schemas';

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
