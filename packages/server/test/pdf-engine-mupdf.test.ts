import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { checkPasswordRoundTrip } from './helpers/pdf-checks.ts';
import { startTestServer, type TestServer } from './helpers/test-server.ts';
import { encryptedPdf, garbagePdf, textPdf } from './helpers/pdf-fixtures.ts';

/** The opt-in MuPDF engine answers the same contract (SVC_PDF_ENGINE=mupdf). */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_PDF_ENGINE: 'mupdf', SVC_PDF_RATE_LIMIT: '0' } });
});
test.after.always(async () => {
  await svc?.close();
});

test('mupdf extracts pages, metadata and layout through the same contract; a path is streamed from disk', async (t) => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'svc-mupdf-')), 'doc.pdf');
  writeFileSync(file, textPdf([['Hello from a retrie-', 'val test.'], ['Page two.']], { title: 'MuPDF title' }));
  const result = await svc.operator.pdf.extractFile(file);
  t.is(result.engine, 'mupdf');
  t.is(result.page_count, 2);
  t.is(result.pages[0]!.text, 'Hello from a retrieval test.');
  t.is(result.pages[1]!.text, 'Page two.');
  t.is(result.metadata.title, 'MuPDF title');
  t.is(result.pages[0]!.layout?.width, 612);
});

test('mupdf refuses encrypted and broken files with the same codes', async (t) => {
  const encrypted = await t.throwsAsync(svc.operator.pdf.extractFile(new Uint8Array(encryptedPdf())));
  t.is((encrypted as { code?: string }).code, 'pdf_encrypted');
  const broken = await t.throwsAsync(svc.operator.pdf.extractFile(new Uint8Array(garbagePdf())));
  t.is((broken as { code?: string }).code, 'pdf_invalid');
});

test('an encrypted PDF opens with its password on the JSON route; a wrong password is pdf_password_incorrect', async (t) => {
  await checkPasswordRoundTrip(t, svc.operator);
});
