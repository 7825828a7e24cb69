import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { realPdfCorpus, uploadAll } from './helpers/pdf-corpus.ts';

/**
 * Real PDFs from Debian documentation packages get extracted within the parse deadline while
 * the server keeps answering. The files are fetched with apt on first use (never committed), so
 * this runs in `pnpm test:corpus`, not in `pnpm test`.
 */
const PARSE_MS = 15_000;
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_PDF_RATE_LIMIT: '0', SVC_PDF_MAX_PENDING: '8' } });
});
test.after.always(async () => {
  await svc?.close();
});

test.serial('real PDFs from Debian documentation packages: all extracted, first 32 pages, text on every document', async (t) => {
  const files = realPdfCorpus();
  t.true(files.length >= 10, `corpus has ${files.length} files`);
  const { outcomes, slowestHealthMs } = await uploadAll(svc, files, (file) => new Uint8Array(readFileSync(file)));
  let pages = 0;
  for (const [file, outcome] of outcomes) {
    const name = path.basename(file);
    t.is(outcome.status, 200, `${name}: ${outcome.code}`);
    t.is(outcome.pages_returned, Math.min(32, outcome.page_count ?? 0), name);
    if (!name.endsWith('pixel.pdf')) t.true((outcome.char_count ?? 0) > 0, `${name} has text`);
    t.true(outcome.ms < PARSE_MS, `${name} took ${Math.round(outcome.ms)} ms`);
    pages += outcome.pages_returned ?? 0;
  }
  t.log(`${outcomes.size} files, ${pages} pages; slowest health check ${Math.round(slowestHealthMs)} ms`);
  t.true(slowestHealthMs < 5000, `slowest health check ${Math.round(slowestHealthMs)} ms`);
});
