import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { trickyPdfCorpus, uploadAll, uploadPdf } from './helpers/pdf-corpus.ts';

/**
 * The malformed files of pdf.js, poppler, Ghostscript and PDFBox test suites, which live outside
 * the repository (../shared/corpus/tricky-pdfs, or TRICKY_PDF_DIR): this file is in the corpus
 * lane (`pnpm test:corpus`), so `pnpm test` passes on a clone of the repository alone. Every file
 * gets its documented answer (docs/pdf.md) within the parse deadline (a minute, as in
 * pdf-corpus.test.ts) while the server keeps answering, on the default engine and on pdf.js where
 * the two differ.
 */
const PARSE_MS = 60_000;
let svc: TestServer;
let pdfjs: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_PDF_RATE_LIMIT: '0', SVC_PDF_MAX_PENDING: '8', SVC_PDF_PARSE_TIMEOUT_MS: String(PARSE_MS) } });
  pdfjs = await startTestServer({ env: { SVC_PDF_ENGINE: 'pdfjs', SVC_PDF_RATE_LIMIT: '0' } });
});
test.after.always(async () => {
  await svc?.close();
  await pdfjs?.close();
});

/** The answers documented in docs/pdf.md for the default engine; every other file yields pages. */
const trickyRefusals: Record<string, string> = {
  'poppler-395-0-fuzzed.pdf': 'pdf_invalid',
  // pdf.js counts one page it cannot read and pdftotext finds no text; PDFium refuses the file.
  'poppler-742-0-fuzzed.pdf': 'pdf_invalid',
};

test.serial('the 63 malformed files of the shared corpus: pages or a clear 422, never a stall or a crash', async (t) => {
  const files = trickyPdfCorpus();
  t.is(files.length, 63);
  const { outcomes, slowestHealthMs } = await uploadAll(svc, files, (file) => new Uint8Array(readFileSync(file)));
  let withPages = 0;
  for (const [file, outcome] of outcomes) {
    const name = path.basename(file);
    const refusal = trickyRefusals[name];
    if (refusal) {
      t.is(outcome.status, 422, name);
      t.is(outcome.code, refusal, name);
    } else {
      t.is(outcome.status, 200, `${name}: ${outcome.code}`);
      withPages += 1;
    }
    t.true(outcome.ms < PARSE_MS, `${name} took ${Math.round(outcome.ms)} ms`);
  }
  t.is(withPages, 61);
  t.true(slowestHealthMs < 5000, `slowest health check ${Math.round(slowestHealthMs)} ms`);
  t.is((await uploadPdf(svc, new Uint8Array(readFileSync(files[0]!)))).status, 200, 'still serving');
});

test.serial('pdfjs answers the two malformed files where it differs from PDFium as docs/pdf.md says', async (t) => {
  const file = (name: string) => new Uint8Array(readFileSync(trickyPdfCorpus().find((path) => path.endsWith(`/${name}`))!));
  // Encrypted attachment, readable content: pdf.js refuses the whole file, PDFium reads the page.
  const refused = await t.throwsAsync(pdfjs.operator.pdf.extractFile(file('encrypted-attachment.pdf')));
  t.is((refused as { code?: string }).code, 'pdf_encrypted');
  // A fuzzed page tree: pdf.js counts one page it cannot read, PDFium refuses the file.
  const fuzzed = await pdfjs.operator.pdf.extractFile(file('poppler-742-0-fuzzed.pdf'));
  t.is(fuzzed.pages_returned, 1);
  t.deepEqual(
    fuzzed.warnings.map((warning) => warning.code),
    ['page_failed'],
  );
});
