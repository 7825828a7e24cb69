/**
 * A batch job from start to end: submit up to 8 `calculate` items (one expression per
 * argument), wait for the job with the client's backoff, then read one outcome per item.
 * `jobs.submit` sends an Idempotency-Key it generates (or the one given with `--key`) on every
 * retry, so a retried submission never queues a second job: pass the same `--key` when rerunning
 * after a lost answer and you get the first job back. An item can fail on its own (`1/0` is
 * `calculate_not_finite`) while the others succeed.
 *
 * Run: `SVC_BASE_URL=http://127.0.0.1:8787 SVC_TOKEN=<key> node src/main.ts '2^10' 'sqrt(2)'`.
 * The token needs scopes `jobs:write` and `jobs:read` (a developer key of a registered agent, or
 * the operator token).
 */
import { parseArgs } from 'node:util';
import { createClient, SvcError } from '@svc/client';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { key: { type: 'string' }, 'timeout-seconds': { type: 'string', default: '120' } },
});
const expressions = positionals.length > 0 ? positionals : ['2^10', 'sqrt(2)', '1/0'];
const svc = createClient(); // SVC_BASE_URL, SVC_API_URL and SVC_TOKEN come from the environment.

try {
  const job = await svc.jobs.submit(
    { schema: 'svc.batch-job-request.v1', operation: 'calculate', items: expressions.map((expression) => ({ expression })) },
    { idempotencyKey: values.key },
  );
  process.stdout.write(`submitted ${job.job_id} (${job.status}, ${job.progress.total} items)\n`);

  // Waiting stops at the time limit; the job itself goes on and can be read later by its id.
  const signal = AbortSignal.timeout(Number(values['timeout-seconds']) * 1000);
  const done = await svc.jobs.wait(job.job_id, {
    signal,
    onProgress: (current) => process.stderr.write(`${current.status} ${current.progress.succeeded + current.progress.failed}/${current.progress.total}\n`),
  });
  process.stdout.write(`finished ${done.job_id}: ${done.status}, ${done.progress.succeeded} succeeded, ${done.progress.failed} failed\n`);
  if (done.status === 'cancelled') process.exit(1);

  const result = await svc.jobs.result({ params: { job_id: done.job_id } });
  for (const item of result.items) {
    const expression = expressions[item.index];
    if (item.status === 'succeeded') process.stdout.write(`item ${item.index}: ${expression} = ${(item.result as { value: number }).value}\n`);
    else process.stdout.write(`item ${item.index}: ${expression} failed: ${item.error.code}\n`);
  }
} catch (error) {
  // A refused submission (a bad expression, a missing scope) is a typed error with a stable code.
  if (!SvcError.isInstance(error)) throw error;
  process.stderr.write(`error: ${error.status} ${error.code}: ${error.message}\n`);
  process.exit(1);
}
