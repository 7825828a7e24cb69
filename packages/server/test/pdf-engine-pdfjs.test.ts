import { readFileSync } from 'node:fs';
import test from 'ava';
import { checkEngineContract, checkEngineRefusals, checkPasswordRoundTrip } from './helpers/pdf-checks.ts';
import { trickyPdfCorpus } from './helpers/pdf-corpus.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** pdf.js, the engine before PDFium and still selectable (SVC_PDF_ENGINE=pdfjs), answers the same contract. */
// One parse at a time: the tests check the engine's answers, and run side by side on a loaded
// machine their parses would queue behind each other past the 2 s queue deadline (503
// pdf_queue_timeout, the server's right answer to that, tested in pdf-worker-deadlines).
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_PDF_ENGINE: 'pdfjs', SVC_PDF_RATE_LIMIT: '0' } });
});
test.after.always(async () => {
  await svc?.close();
});

test.serial('pdfjs extracts pages, metadata and layout through the same contract; a path is streamed from disk', async (t) => {
  await checkEngineContract(t, svc.operator, 'pdfjs');
});

test.serial('pdfjs refuses encrypted and broken files with the same codes', async (t) => {
  await checkEngineRefusals(t, svc.operator);
});

test.serial('an encrypted PDF opens with its password on the JSON route; a wrong password is pdf_password_incorrect', async (t) => {
  await checkPasswordRoundTrip(t, svc.operator);
});

test.serial('pdfjs answers the two malformed files where it differs from PDFium as docs/pdf.md says', async (t) => {
  const file = (name: string) => new Uint8Array(readFileSync(trickyPdfCorpus().find((path) => path.endsWith(`/${name}`))!));
  // Encrypted attachment, readable content: pdf.js refuses the whole file, PDFium reads the page.
  const refused = await t.throwsAsync(svc.operator.pdf.extractFile(file('encrypted-attachment.pdf')));
  t.is((refused as { code?: string }).code, 'pdf_encrypted');
  // A fuzzed page tree: pdf.js counts one page it cannot read, PDFium refuses the file.
  const fuzzed = await svc.operator.pdf.extractFile(file('poppler-742-0-fuzzed.pdf'));
  t.is(fuzzed.pages_returned, 1);
  t.deepEqual(
    fuzzed.warnings.map((warning) => warning.code),
    ['page_failed'],
  );
});
