import test from 'ava';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { ParserPool } from '../src/features/pdf/parser-pool.ts';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer } from '@svc/testing/test-server';

/**
 * The PDF parser workers start with the first parse, not at boot (each is a V8 isolate with the
 * engine's WASM heap: memory a server that never sees a PDF should not hold), and that first
 * parse is still served, having waited for the start.
 */
const pdfConfig = () => loadConfig({ SVC_DATA_DIR: '/nonexistent', SVC_PDF_WORKERS: '2' }).pdf;

test('a new pool has no worker thread until the first parse, which starts all of them and is answered', async (t) => {
  const pool = new ParserPool(pdfConfig(), pino({ level: 'silent' }));
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.is(pool.stats.threads, 0, 'no thread before any parse');
    const run = pool.run({ bytes: new Uint8Array(numberedPdf(3)), startPage: 1, maxPages: 3, maxChars: 10_000 }, 'pdfium');
    t.is(pool.stats.threads, 2, 'the first parse starts every worker');
    const pages: number[] = [];
    for await (const page of run.pages) pages.push(page.page_number);
    const { summary } = await run.result;
    t.deepEqual(pages, [1, 2, 3]);
    t.is(summary.pages_returned, 3);
    t.true(run.timings().worker_start_ms > 0, 'the first parse waited for a worker to start');
    t.is(pool.stats.threads, 2);
  } finally {
    await pool.close();
  }
});

test('a closed pool that never started refuses a parse with 503 pdf_worker_unavailable and starts nothing', async (t) => {
  const pool = new ParserPool(pdfConfig(), pino({ level: 'silent' }));
  await pool.close();
  const error = t.throws(() => pool.run({ bytes: new Uint8Array(numberedPdf(1)), startPage: 1, maxPages: 1, maxChars: 100 }, 'pdfium'));
  t.is((error as { code?: string }).code, 'pdf_worker_unavailable');
  t.is(pool.stats.threads, 0);
});

test('the first upload to a new server is answered, its Server-Timing showing the worker start it waited for', async (t) => {
  const svc = await startTestServer({ env: { SVC_PDF_RATE_LIMIT: '0' } });
  try {
    const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
      body: new Uint8Array(numberedPdf(2)),
    });
    t.is(response.status, 200);
    const body = (await response.json()) as { pages_returned: number };
    t.is(body.pages_returned, 2);
    const workerStart = Number(/worker_start_ms;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '')?.[1]);
    t.true(workerStart > 0, `worker_start_ms ${workerStart}`);
  } finally {
    await svc.close();
  }
});
