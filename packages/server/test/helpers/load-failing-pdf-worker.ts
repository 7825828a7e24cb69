import { readFileSync } from 'node:fs';

/**
 * The real PDF parser worker (TestSeams.pdfWorkerModule), whose module throws while loading for
 * as long as the file named by SVC_TEST_PDF_WORKER_LOAD says `fail`, as a worker whose file or
 * dependency is missing does; once it says anything else, threads load the real worker.
 */
const control = process.env.SVC_TEST_PDF_WORKER_LOAD;
if (!control) throw new Error('SVC_TEST_PDF_WORKER_LOAD names no control file');
if (readFileSync(control, 'utf8').trim() === 'fail') throw new Error('this worker module does not load (test)');

const real = await import('../../src/features/pdf/worker/pdf-worker.ts');
export default real.default;
