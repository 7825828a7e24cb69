import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ParseTask } from '../../src/features/pdf/worker/pdf-worker.ts';

/**
 * The real PDF parser worker, made slow on purpose (TestSeams.pdfWorkerModule). The control file
 * named by SVC_TEST_PDF_WORKER_DELAYS holds `{ "start": [ms...], "warmup": [ms...], "parse": [ms...] }`,
 * one entry per thread start, per warm-up and per parse, taken in order (none left: no delay). A
 * thread sleeps its start delay before the real worker module loads, so Piscina hears nothing from
 * it until then. A warm-up or a parse runs the real one, then keeps its worker busy for its delay
 * (an engine slow to load, a parse of known length). The test runs one worker, so nothing races
 * for the file.
 */
const control = process.env.SVC_TEST_PDF_WORKER_DELAYS;
if (!control) throw new Error('SVC_TEST_PDF_WORKER_DELAYS names no control file');

function nextDelay(kind: 'start' | 'warmup' | 'parse'): number {
  const delays = JSON.parse(readFileSync(control!, 'utf8')) as Record<typeof kind, number[]>;
  const delay = delays[kind]?.shift() ?? 0;
  writeFileSync(control!, JSON.stringify(delays));
  return delay;
}

await sleep(nextDelay('start'));
const real = await import('../../src/features/pdf/worker/pdf-worker.ts');

export default async function slowPdfWorker(task: ParseTask): Promise<boolean> {
  const answer = await real.default(task);
  await sleep(nextDelay(task.warmup ? 'warmup' : 'parse'));
  return answer;
}
