import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './https-source.ts';

/**
 * A server whose PDF URL fetch reaches a local HTTPS source that answers each PDF after
 * `delayMs`: a batch job of such PDFs sits at 0 of its items for that long, over several of
 * jobs_get's polls (the MCP progress tests' job).
 */
export async function startSlowPdfServer(delayMs: number): Promise<{ svc: TestServer; source: HttpsSource; close: () => Promise<void> }> {
  const certificate = selfSignedCertificate(['pdf.test']);
  const pdf = numberedPdf(1);
  const source = await startHttpsSource(certificate, {
    '/slow.pdf': (_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.length) });
        response.end(pdf);
      }, delayMs);
    },
  });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  const svc = await startTestServer({
    env: { SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
  return { svc, source, close: async () => void (await Promise.all([svc.close(), source.close()])) };
}

/** The `jobs_submit` tool arguments of a job of two slow PDFs (two URLs, so two fetches). */
export function slowJobArguments(source: HttpsSource, idempotencyKey: string) {
  return {
    body: {
      schema: 'svc.batch-job-request.v1',
      operation: 'pdf_extract',
      items: [{ url: `https://pdf.test:${source.port}/slow.pdf` }, { url: `https://pdf.test:${source.port}/slow.pdf?2` }],
    },
    idempotency_key: idempotencyKey,
  };
}
