import test from 'ava';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { numberedPdf } from '@svc/testing/pdf-fixtures';

/**
 * SVC_PDF_FETCH_TIMEOUT_MS bounds the whole URL download, redirects included: a chain of hops
 * that each take most of the deadline is cut off within the first two hops, instead of every hop
 * getting a fresh deadline. Outcomes, not clocks: which hops the source saw, and the answer.
 */
const FETCH_MS = 1000;
const HOP_MS = 700;
const small = numberedPdf(1);
const certificate = selfSignedCertificate(['pdf.test']);
/** Hops requested per chain ("a" or "b"), as the source saw them. */
const hopsSeen: Record<string, number[]> = { a: [], b: [] };

let source: HttpsSource;
let svc: TestServer;

test.before(async () => {
  source = await startHttpsSource(certificate, {
    // /hop?chain=a&left=3 waits HOP_MS, then redirects to left=2, ... and finally to the document.
    '/hop': (request, response) => {
      const query = new URL(request.url!, 'https://x').searchParams;
      const left = Number(query.get('left'));
      hopsSeen[query.get('chain')!]!.push(left);
      const timer = setTimeout(
        () => response.writeHead(302, { location: left === 0 ? '/doc.pdf' : `/hop?chain=${query.get('chain')}&left=${left - 1}` }).end(),
        HOP_MS,
      );
      response.on('close', () => clearTimeout(timer));
    },
    '/fast': (request, response) => {
      const left = Number(new URL(request.url!, 'https://x').searchParams.get('left'));
      response.writeHead(302, { location: left === 0 ? '/doc.pdf' : `/fast?left=${left - 1}` }).end();
    },
    '/doc.pdf': (_request, response) => response.writeHead(200, { 'content-length': String(small.length) }).end(small),
  });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  svc = await startTestServer({
    env: { SVC_PDF_FETCH_TIMEOUT_MS: String(FETCH_MS), SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

async function extractUrl(url: string) {
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  return { status: response.status, body: (await response.json()) as { code?: string; error?: string } };
}

test('slow redirect hops share one deadline: the download stops in the second hop, whatever the chain length', async (t) => {
  // Three redirects is the most followed: each hop alone is within the deadline, the chain is not.
  // Five is past that limit: without one deadline it would end at the limit, four slow hops later.
  const [three, five] = await Promise.all([
    extractUrl(`https://pdf.test:${source.port}/hop?chain=a&left=2`),
    extractUrl(`https://pdf.test:${source.port}/hop?chain=b&left=4`),
  ]);
  for (const [answer, chain] of [
    [three, 'a'],
    [five, 'b'],
  ] as const) {
    t.is(answer.status, 422, JSON.stringify(answer.body));
    t.is(answer.body.code, 'source_fetch_failed');
    t.is(answer.body.error, `The URL could not be fetched (no answer within ${FETCH_MS / 1000} s).`);
    t.true(hopsSeen[chain]!.length <= 2, `chain ${chain}: hops asked for ${JSON.stringify(hopsSeen[chain])}`);
  }
});

test('a fast chain of three redirects is still followed to the document', async (t) => {
  const answer = await extractUrl(`https://pdf.test:${source.port}/fast?left=2`);
  t.is(answer.status, 200, JSON.stringify(answer.body));
});
