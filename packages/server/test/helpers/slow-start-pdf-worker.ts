import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ParseTask } from '../../src/features/pdf/worker/pdf-worker.ts';

/**
 * A PDF parser worker that really is slow to start (TestSeams.pdfWorkerModule). The control file
 * named by SVC_TEST_PDF_WORKER_DELAYS holds `{ "start": [ms...], "warmup": [ms...] }`, one entry
 * per thread start and per warm-up, taken in order (none left: no delay). A thread sleeps its
 * start delay before the real worker module loads, so Piscina hears nothing from it until then; a
 * warm-up runs the real one, then keeps its worker busy for its delay, as an engine slow to load
 * would. The test runs one worker, so nothing races for the file.
 */
const control = process.env.SVC_TEST_PDF_WORKER_DELAYS;
if (!control) throw new Error('SVC_TEST_PDF_WORKER_DELAYS names no control file');

function nextDelay(kind: 'start' | 'warmup'): number {
  const delays = JSON.parse(readFileSync(control!, 'utf8')) as Record<typeof kind, number[]>;
  const delay = delays[kind].shift() ?? 0;
  writeFileSync(control!, JSON.stringify(delays));
  return delay;
}

await sleep(nextDelay('start'));
const real = await import('../../src/features/pdf/worker/pdf-worker.ts');

export default async function slowPdfWorker(task: ParseTask): Promise<boolean> {
  const answer = await real.default(task);
  if (task.warmup) await sleep(nextDelay('warmup'));
  return answer;
}
