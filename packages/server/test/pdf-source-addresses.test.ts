import test from 'ava';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { signInAgent } from '@svc/testing/identity';

/**
 * Which addresses a caller's URL may make svc connect to: public unicast only, judged by ipaddr.js
 * ranges (not a hand list), for every address a name resolves to, in every spelling. The test
 * source listens on 127.0.0.1, which the fetcher's test seam exempts, and nothing wider: so every
 * refused form below would otherwise be tried, and the source counts that no connection came.
 * Both outbound fetches of caller URLs share the guard: the PDF URL fetch and the resolve_link job.
 */
const small = numberedPdf(1);
const certificate = selfSignedCertificate(['pdf.test']);

/** Resolver answers a name can give: the IPv4-in-IPv6 forms, odd IPv4 spellings, and special ranges. */
const refusedAnswers: Record<string, string[]> = {
  'v4-compatible.test': ['::127.0.0.1'],
  'v4-translated.test': ['::ffff:0:7f00:1'],
  '6to4.test': ['2002:7f00:1::'],
  'nat64-local.test': ['64:ff9b:1::a00:1'],
  'nat64.test': ['64:ff9b::a00:1'],
  'site-local.test': ['fec0::1'],
  'teredo.test': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  'documentation-v6.test': ['2001:db8::1'],
  'unspecified.test': ['0.0.0.0'],
  'short-loopback.test': ['127.1'],
  'decimal-loopback.test': ['2130706433'],
  'hex-loopback.test': ['0x7f.1'],
  'cgnat.test': ['100.64.0.1'],
  'cgnat-top.test': ['100.127.255.254'],
  'benchmarking.test': ['198.18.0.1'],
  'broadcast.test': ['255.255.255.255'],
  'metadata-mapped.test': ['::ffff:169.254.169.254'],
  'not-an-address.test': ['localhost'],
  // DNS rebinding by a second answer: every address counts, not only the first.
  'exempt-then-private.test': ['127.0.0.1', '::ffff:0:7f00:1'],
  'exempt-then-cgnat.test': ['127.0.0.1', '100.64.0.1'],
};

/** URL hosts that are addresses already. `127.1`, `2130706433` and `0x7f.1` mean 127.0.0.1, the exempt address, so their .2 twins stand in. */
const refusedLiterals = [
  '[::127.0.0.1]',
  '[::ffff:0:7f00:1]',
  '[2002:7f00:1::]',
  '[64:ff9b:1::a00:1]',
  '[fec0::1]',
  '[2001::1]',
  '[::]',
  '[::ffff:127.0.0.2]',
  '0.0.0.0',
  '0',
  '127.2',
  '2130706434',
  '0x7f.2',
  '0177.0.0.2',
  '100.64.0.1',
];

let source: HttpsSource;
let svc: TestServer;

test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/doc.pdf': (_request, response) => response.writeHead(200, { 'content-length': String(small.length) }).end(small),
  });
  const lookup = async (hostname: string) => {
    if (hostname === 'pdf.test') return [{ address: '127.0.0.1', family: 4 }];
    const answers = refusedAnswers[hostname];
    if (!answers) throw new Error(`ENOTFOUND ${hostname}`);
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  svc = await startTestServer({
    env: { SVC_PDF_RATE_LIMIT: '0', SVC_PDF_MAX_PENDING: '64' },
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
  return { status: response.status, body: (await response.json()) as { code?: string; error?: string; page_count?: number } };
}

test.serial('the exempt test address is fetched (the control: the seam still works)', async (t) => {
  const answer = await extractUrl(`https://pdf.test:${source.port}/doc.pdf`);
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.body.page_count, 1);
});

test.serial('a name is refused when any address it resolves to is not public unicast, in any spelling', async (t) => {
  const before = source.connections;
  for (const host of Object.keys(refusedAnswers)) {
    const answer = await extractUrl(`https://${host}:${source.port}/doc.pdf`);
    t.is(answer.status, 422, host);
    t.is(answer.body.code, 'source_url_refused', `${host}: ${answer.body.error}`);
  }
  t.is(source.connections, before, 'no connection was opened');
});

test.serial('an address literal in the URL is refused in every IPv6 and IPv4 form', async (t) => {
  for (const host of refusedLiterals) {
    const answer = await extractUrl(`https://${host}:${source.port}/doc.pdf`);
    t.is(answer.status, 422, host);
    t.is(answer.body.code, 'source_url_refused', `${host}: ${answer.body.error}`);
  }
});

test.serial('resolve_link jobs share the guard', async (t) => {
  const { client } = await signInAgent(svc);
  const urls = ['v4-compatible.test', '6to4.test', 'exempt-then-cgnat.test', '[::127.0.0.1]'].map((host) => ({ url: `https://${host}:${source.port}/` }));
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'resolve_link', items: urls });
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
  const result = await client.jobs.result({ params: { job_id: job.job_id } });
  t.deepEqual(
    result.items.map((item) => (item.status === 'succeeded' ? 'fetched' : item.error.code)),
    ['source_url_refused', 'source_url_refused', 'source_url_refused', 'source_url_refused'],
  );
});
