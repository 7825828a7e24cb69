import test from 'ava';
import { checkEngineContract, checkEngineRefusals, checkPasswordRoundTrip } from './helpers/pdf-checks.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** The opt-in MuPDF engine answers the same contract (SVC_PDF_ENGINE=mupdf). */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_PDF_ENGINE: 'mupdf', SVC_PDF_RATE_LIMIT: '0' } });
});
test.after.always(async () => {
  await svc?.close();
});

test('mupdf extracts pages, metadata and layout through the same contract; a path is streamed from disk', async (t) => {
  await checkEngineContract(t, svc.operator, 'mupdf');
});

test('mupdf refuses encrypted and broken files with the same codes', async (t) => {
  await checkEngineRefusals(t, svc.operator);
});

test('an encrypted PDF opens with its password on the JSON route; a wrong password is pdf_password_incorrect', async (t) => {
  await checkPasswordRoundTrip(t, svc.operator);
});
