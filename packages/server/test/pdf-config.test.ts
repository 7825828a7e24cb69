import test from 'ava';
import { pdfLimits } from '@svc/schemas';
import { ConfigError, loadConfig } from '../src/index.ts';

/** The PDF settings: defaults are the spec's section 8 numbers; every bound is checked at its edge. */
test('the defaults are the spec limits', (t) => {
  t.like(loadConfig({}).pdf, {
    engine: 'pdfium',
    workers: pdfLimits.parserWorkers,
    maxPending: pdfLimits.maxPendingRequests,
    queueTimeoutMs: 2000,
    workerStartTimeoutMs: 30_000,
    parseTimeoutMs: 15_000,
    workerMemoryBytes: 805_306_368,
    fetchTimeoutMs: 10_000,
  });
});

const deadlines = {
  SVC_PDF_QUEUE_TIMEOUT_MS: 'queueTimeoutMs',
  SVC_PDF_WORKER_START_TIMEOUT_MS: 'workerStartTimeoutMs',
  SVC_PDF_PARSE_TIMEOUT_MS: 'parseTimeoutMs',
  SVC_PDF_FETCH_TIMEOUT_MS: 'fetchTimeoutMs',
} as const;

test('each deadline takes 1 to 600000 ms; 0, 600001 and non-integers stop the server naming the variable', (t) => {
  for (const [variable, field] of Object.entries(deadlines)) {
    for (const ms of ['1', '600000']) t.is(loadConfig({ [variable]: ms }).pdf[field], Number(ms), `${variable}=${ms}`);
    for (const ms of ['0', '600001', '1.5', 'soon'])
      t.throws(() => loadConfig({ [variable]: ms }), { instanceOf: ConfigError, message: new RegExp(variable) }, `${variable}=${ms}`);
  }
});

test('workers 1..64, waiting requests 0..1024, worker memory from 64 MiB', (t) => {
  t.is(loadConfig({ SVC_PDF_WORKERS: '1' }).pdf.workers, 1);
  t.is(loadConfig({ SVC_PDF_WORKERS: '64' }).pdf.workers, 64);
  for (const workers of ['0', '65']) t.throws(() => loadConfig({ SVC_PDF_WORKERS: workers }), { message: /SVC_PDF_WORKERS/ });
  t.is(loadConfig({ SVC_PDF_MAX_PENDING: '0' }).pdf.maxPending, 0);
  t.is(loadConfig({ SVC_PDF_MAX_PENDING: '1024' }).pdf.maxPending, 1024);
  for (const pending of ['-1', '1025']) t.throws(() => loadConfig({ SVC_PDF_MAX_PENDING: pending }), { message: /SVC_PDF_MAX_PENDING/ });
  t.is(loadConfig({ SVC_PDF_WORKER_MEMORY_BYTES: String(64 * 1024 * 1024) }).pdf.workerMemoryBytes, 64 * 1024 * 1024);
  t.throws(() => loadConfig({ SVC_PDF_WORKER_MEMORY_BYTES: String(64 * 1024 * 1024 - 1) }), { message: /SVC_PDF_WORKER_MEMORY_BYTES/ });
  t.throws(() => loadConfig({ SVC_PDF_ENGINE: 'pdf2json' }), { message: /SVC_PDF_ENGINE/ });
});
