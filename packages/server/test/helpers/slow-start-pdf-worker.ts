import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A PDF parser worker that really starts slowly (TestSeams.pdfWorkerModule). Before the real
 * worker module loads, each thread takes the next delay from the control file named by
 * SVC_TEST_PDF_WORKER_DELAYS (a JSON array of milliseconds, one entry per thread start, in
 * order; empty means start at once) and sleeps: Piscina hears nothing from the thread until then.
 * The test runs one worker, so threads start one at a time and never race for the file.
 */
const control = process.env.SVC_TEST_PDF_WORKER_DELAYS;
if (!control) throw new Error('SVC_TEST_PDF_WORKER_DELAYS names no control file');
const delays = JSON.parse(readFileSync(control, 'utf8')) as number[];
const delay = delays.shift() ?? 0;
writeFileSync(control, JSON.stringify(delays));
await sleep(delay);
const real = await import('../../src/features/pdf/worker/pdf-worker.ts');

export default real.default;
