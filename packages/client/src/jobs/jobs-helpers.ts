import type { BatchJob, BatchJobRequest, BatchJobResult, Contract } from '@svc/schemas';
import type { ClientOf } from '../derive.ts';
import type { CallOptions } from '../transport.ts';

export interface SubmitJobOptions extends CallOptions {
  /** Names this submission; generated (a UUID) when absent and reused by every retry of this call. */
  idempotencyKey?: string;
}

export interface WaitForJobOptions {
  /** Stops waiting (the job itself goes on). */
  signal?: AbortSignal;
  /** Called with each status read while waiting. */
  onProgress?: (job: BatchJob) => void;
  /** First delay between polls in ms (default 250); it doubles up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest delay between polls in ms (default 5000). */
  maxIntervalMs?: number;
}

export interface JobsHelpers {
  /**
   * Submits a batch job. The Idempotency-Key is `idempotencyKey` or a generated one, sent on
   * every retry, so a retried submission never queues a second job.
   *
   * @example
   * ```ts
   * const job = await svc.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '2^10' }] });
   * const done = await svc.jobs.wait(job.job_id);
   * const result = await svc.jobs.result({ params: { job_id: done.job_id } });
   * ```
   */
  submit(request: BatchJobRequest, options?: SubmitJobOptions): Promise<BatchJob>;
  /**
   * Polls a job with backoff (250 ms doubling to 5 s, with jitter) until it is completed, failed
   * or cancelled, and answers its last status.
   *
   * @example
   * ```ts
   * const job = await svc.jobs.wait(jobId, { onProgress: (j) => process.stderr.write(`${j.status} ${j.progress.succeeded}/${j.progress.total}\n`) });
   * ```
   */
  wait(jobId: string, options?: WaitForJobOptions): Promise<BatchJob>;
  /** `wait`, then the result of a job that completed or failed. */
  waitForResult(jobId: string, options?: WaitForJobOptions): Promise<BatchJobResult>;
}

const finished = new Set(['completed', 'failed', 'cancelled']);

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The helpers over the contract's job routes (the derived `submit` takes the header by hand). */
export function createJobsHelpers(jobs: ClientOf<Contract>['jobs']): JobsHelpers {
  const derivedSubmit = jobs.submit;
  const wait: JobsHelpers['wait'] = async (jobId, options = {}) => {
    let delay = options.intervalMs ?? 250;
    const maxDelay = options.maxIntervalMs ?? 5000;
    for (;;) {
      const job = await jobs.get({ params: { job_id: jobId } }, { signal: options.signal });
      options.onProgress?.(job);
      if (finished.has(job.status)) return job;
      await sleep(delay * (0.8 + Math.random() * 0.4), options.signal);
      delay = Math.min(maxDelay, delay * 2);
    }
  };
  return {
    submit(request, options = {}) {
      const { idempotencyKey, ...call } = options;
      const key = idempotencyKey ?? crypto.randomUUID();
      return derivedSubmit({ headers: { 'idempotency-key': key }, body: request }, { ...call, idempotencyKey: key });
    },
    wait,
    async waitForResult(jobId, options) {
      await wait(jobId, options);
      return jobs.result({ params: { job_id: jobId } }, { signal: options?.signal });
    },
  };
}
