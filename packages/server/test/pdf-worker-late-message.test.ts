import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { numberedPdf } from '@svc/testing/pdf-fixtures';

/**
 * A parse ends when both the worker's task has answered and its last message has come: the two
 * travel on different channels, with no order between them. The worker here sends its last
 * message 300 ms after its task answered (helpers/late-message-pdf-worker.ts). Before, the
 * server waited one turn of its event loop for that message, and on a busy machine answered 503
 * pdf_worker_unavailable for a parse that had succeeded (CI, 2026-11-23).
 */
let svc: TestServer;
test.before(async () => {
  // Read by each Piscina worker as it starts: an idle worker keeps running its timers (see the helper).
  process.env.PISCINA_ENABLE_ASYNC_ATOMICS = '1';
  svc = await startTestServer({
    env: { SVC_PDF_WORKERS: '1', SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfWorkerModule: new URL('./helpers/late-message-pdf-worker.ts', import.meta.url) },
  });
});
test.after.always(async () => {
  await svc?.close();
});

test('a parse whose last message trails the task is answered whole: every page, the summary, 200', async (t) => {
  const answer = await svc.operator.pdf.extractFile(new Uint8Array(numberedPdf(3)));
  t.is(answer.pages_returned, 3);
  t.deepEqual(
    answer.pages.map((page) => page.page_number),
    [1, 2, 3],
  );
  t.true(answer.pages.every((page) => page.text.length > 0));
});

test('a refusal whose message trails the task keeps its own code, not pdf_worker_unavailable', async (t) => {
  const refused = await t.throwsAsync(svc.operator.pdf.extractFile(new TextEncoder().encode('%PDF-1.7\nnot really a pdf\n%%EOF\n')));
  t.not((refused as { code?: string }).code, 'pdf_worker_unavailable');
  t.is((refused as { status?: number }).status, 422);
});
