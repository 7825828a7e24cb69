import test from 'ava';
import { pdfLimits } from '@svc/schemas';
import { selfSignedCertificate, sendChunked, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { numberedPdf, pdfOfSize } from '@svc/testing/pdf-fixtures';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * `POST /v1/pdf/extract` with an https URL, against a real HTTPS server on loopback. The SSRF
 * guard refuses loopback, so the test reaches its own server through the fetcher's test seam:
 * host names resolve through the test's own table, the test certificate is the trusted CA, and
 * exactly 127.0.0.1 is exempt from the refusal (127.0.0.2 and every other private address is not).
 * Connection counts and durations are read by serial tests (AVA runs them before the others).
 */
/** The fetch deadline of the server that tests it; the other server's is a minute, since fetching 16 MiB over TLS took more than 5 s at load 17. */
const FETCH_MS = 5000;
const CAP = pdfLimits.maxFileBytes;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const names: Record<string, string[]> = {
  'pdf.test': ['127.0.0.1'],
  'untrusted.test': ['127.0.0.1'],
  'loopback.test': ['127.0.0.2'],
  'ten.test': ['10.0.0.7'],
  'rfc1918-172.test': ['172.16.5.4'],
  'rfc1918-192.test': ['192.168.1.1'],
  'metadata.test': ['169.254.169.254'],
  'cgnat.test': ['100.64.0.1'],
  'v6-loopback.test': ['::1'],
  'v6-link-local.test': ['fe80::1'],
  'v6-unique-local.test': ['fd00::1'],
  'v4-mapped.test': ['::ffff:10.0.0.1'],
  'mixed.test': ['127.0.0.1', '10.0.0.1'],
};
const lookups = new Map<string, number>();
/** `rebind.test` answers the exempt address once, then a private one: a second lookup would be refused. */
async function lookup(hostname: string) {
  const count = (lookups.get(hostname) ?? 0) + 1;
  lookups.set(hostname, count);
  if (hostname === 'rebind.test') return [{ address: count === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
  const addresses = names[hostname];
  if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

const small = numberedPdf(3);
const atCap = pdfOfSize(CAP);
const overCap = pdfOfSize(CAP + 1);
const certificate = selfSignedCertificate(['pdf.test', 'rebind.test', 'ten.test']);
let source: HttpsSource;
let stranger: HttpsSource;
let svc: TestServer;
let deadlineSvc: TestServer;
let base = '';

test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/doc.pdf': (_request, response) => response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(small.length) }).end(small),
    '/at-cap.pdf': (_request, response) => response.writeHead(200, { 'content-length': String(CAP) }).end(atCap),
    '/at-cap-chunked.pdf': (_request, response) => sendChunked(response, atCap),
    '/over-cap.pdf': (_request, response) => response.writeHead(200, { 'content-length': String(CAP + 1) }).end(overCap),
    '/over-cap-chunked.pdf': (_request, response) => sendChunked(response, overCap),
    '/redirect': (request, response) => response.writeHead(302, { location: new URL(request.url!, 'https://x').searchParams.get('to')! }).end(),
    '/loop': (_request, response) => response.writeHead(302, { location: '/loop' }).end(),
    '/missing.pdf': (_request, response) => response.writeHead(404).end(),
    // Headers and a few bytes, then nothing.
    '/stalled.pdf': (_request, response) => response.writeHead(200).write(small.subarray(0, 100)),
    // A byte every 200 ms, forever: never idle for long, so only the overall deadline stops it.
    '/trickle.pdf': (_request, response) => {
      response.writeHead(200).write(small.subarray(0, 100));
      const timer = setInterval(() => response.write('%'), 200);
      response.on('close', () => clearInterval(timer));
    },
    // The whole document over a tenth of the deadline (the test process also runs the server: leave room for load).
    '/slow-in-time.pdf': async (_request, response) => {
      response.writeHead(200, { 'content-length': String(small.length) });
      const parts = 5;
      const size = Math.ceil(small.length / parts);
      for (let index = 0; index < parts; index += 1) {
        await sleep(FETCH_MS / 10 / parts);
        response.write(small.subarray(index * size, (index + 1) * size));
      }
      response.end();
    },
  });
  // Same loopback address, but a certificate the fetcher was not told to trust.
  stranger = await startHttpsSource(selfSignedCertificate(['untrusted.test']), { '/doc.pdf': (_request, response) => response.end(small) });
  base = `https://pdf.test:${source.port}`;
  const options = (fetchMs: number) => ({
    env: { SVC_PDF_FETCH_TIMEOUT_MS: String(fetchMs), SVC_PDF_RATE_LIMIT: '0', SVC_PDF_MAX_PENDING: '16', SVC_PDF_QUEUE_TIMEOUT_MS: '60000' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
  [svc, deadlineSvc] = await Promise.all([startTestServer(options(60_000)), startTestServer(options(FETCH_MS))]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), deadlineSvc?.close()]);
  await source?.close();
  await stranger?.close();
});

async function extractUrl(url: string, extra: Record<string, unknown> = {}, server = svc) {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/v1/pdf/extract`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, ...extra }),
  });
  const body = (await response.json()) as {
    code?: string;
    error?: string;
    page_count?: number;
    pages_returned?: number;
    pages?: Array<{ page_number: number; text: string }>;
  };
  return { status: response.status, body, ms: performance.now() - started, timing: response.headers.get('server-timing') ?? '' };
}

test('a successful fetch answers the pages, and the download is timed as source_ms', async (t) => {
  const answer = await extractUrl(`${base}/doc.pdf`, { max_pages: 2 });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.body.page_count, 3);
  t.deepEqual(
    answer.body.pages!.map((page) => page.page_number),
    [1, 2],
  );
  t.regex(answer.body.pages![1]!.text, /^Page 2 line 1/);
  t.regex(answer.timing, /source_ms;dur=\d/);
});

test('the typed client streams the pages of a fetched document', async (t) => {
  const stream = await svc.operator.pdf.extract({ body: { url: `${base}/doc.pdf`, stream: true } });
  const pages: number[] = [];
  for await (const message of stream as AsyncIterable<{ event: string; data: { page_number?: number } }>)
    if (message.event === 'page-extracted') pages.push(message.data.page_number!);
  t.deepEqual(pages, [1, 2, 3]);
});

test('the byte cap with Content-Length: exactly 16777216 bytes are taken, one more is 413 before the body is read', async (t) => {
  const at = await extractUrl(`${base}/at-cap.pdf`);
  t.is(at.status, 200, JSON.stringify(at.body));
  t.is(at.body.page_count, 1);
  const over = await extractUrl(`${base}/over-cap.pdf`);
  t.is(over.status, 413);
  t.is(over.body.code, 'payload_too_large');
  t.regex(over.body.error!, /16777217 bytes/, 'refused on the declared length');
  await waitUntil('the fetcher to hang up on /over-cap.pdf instead of reading the body', () => source.cutOff.includes('/over-cap.pdf'));
});

test('the byte cap while streaming, without Content-Length: exactly 16777216 bytes are taken, one more is 413', async (t) => {
  const at = await extractUrl(`${base}/at-cap-chunked.pdf`);
  t.is(at.status, 200, JSON.stringify(at.body));
  const over = await extractUrl(`${base}/over-cap-chunked.pdf`);
  t.is(over.status, 413);
  t.is(over.body.code, 'payload_too_large');
  t.regex(over.body.error!, /over 16777216 bytes/, 'refused while reading');
});

test.serial('the fetch deadline: a source that takes a tenth of it is read; one that stalls or trickles is refused at the deadline', async (t) => {
  const [inTime, stalled, trickle] = await Promise.all([
    extractUrl(`${base}/slow-in-time.pdf`, {}, deadlineSvc),
    extractUrl(`${base}/stalled.pdf`, {}, deadlineSvc),
    extractUrl(`${base}/trickle.pdf`, {}, deadlineSvc),
  ]);
  t.log(
    `in time ${Math.round(inTime.ms)} ms (${/source_ms;dur=([\d.]+)/.exec(inTime.timing)?.[1]} ms fetching), stalled ${Math.round(stalled.ms)} ms, trickle ${Math.round(trickle.ms)} ms`,
  );
  t.is(inTime.status, 200, JSON.stringify(inTime.body));
  for (const answer of [stalled, trickle]) {
    t.is(answer.status, 422);
    t.is(answer.body.code, 'source_fetch_failed');
    t.regex(answer.body.error!, new RegExp(`within ${FETCH_MS / 1000} s`));
    // At the deadline; the bound above only says it was not later (a stall or a trickle would go on for ever).
    t.true(answer.ms >= FETCH_MS && answer.ms < 2 * FETCH_MS, `refused after ${Math.round(answer.ms)} ms`);
  }
});

test.serial('names that resolve to a private, loopback or link-local address are refused without a connection', async (t) => {
  const before = source.connections;
  for (const host of Object.keys(names).filter((name) => name !== 'pdf.test' && name !== 'untrusted.test')) {
    const answer = await extractUrl(`https://${host}:${source.port}/doc.pdf`);
    t.is(answer.status, 422, host);
    t.is(answer.body.code, 'source_url_refused', host);
  }
  t.is(source.connections, before, 'no connection was opened');
});

test('the connection goes to the address that was checked: a second DNS answer is never asked for', async (t) => {
  const answer = await extractUrl(`https://rebind.test:${source.port}/doc.pdf`);
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(lookups.get('rebind.test'), 1);
});

test('redirects are checked again: to a private name, a private address or plain http they are refused; to a public https host followed', async (t) => {
  const redirect = (to: string) => extractUrl(`${base}/redirect?to=${encodeURIComponent(to)}`);
  for (const to of [
    `https://ten.test:${source.port}/doc.pdf`,
    `https://10.0.0.7:${source.port}/doc.pdf`,
    `https://[::1]:${source.port}/doc.pdf`,
    `http://pdf.test:${source.port}/doc.pdf`,
  ]) {
    const answer = await redirect(to);
    t.is(answer.status, 422, to);
    t.is(answer.body.code, 'source_url_refused', to);
  }
  const followed = await redirect(`${base}/doc.pdf`);
  t.is(followed.status, 200);
  t.is(followed.body.page_count, 3);
  const loop = await extractUrl(`${base}/loop`);
  t.is(loop.status, 422);
  t.is(loop.body.code, 'source_fetch_failed');
  t.regex(loop.body.error!, /Too many redirects/);
});

test('non-https URLs are refused; a certificate not trusted, an unknown name and a 404 fail the fetch', async (t) => {
  for (const url of [`http://pdf.test:${source.port}/doc.pdf`, `ftp://pdf.test/doc.pdf`]) {
    const answer = await extractUrl(url);
    t.is(answer.status, 422, url);
    t.is(answer.body.code, 'validation_failed', url);
  }
  for (const url of [`https://untrusted.test:${stranger.port}/doc.pdf`, `https://nowhere.test:${source.port}/doc.pdf`, `${base}/missing.pdf`]) {
    const answer = await extractUrl(url);
    t.is(answer.status, 422, url);
    t.is(answer.body.code, 'source_fetch_failed', url);
  }
  t.is(stranger.connections, 1, 'the untrusted server was reached, and its certificate refused');
});
