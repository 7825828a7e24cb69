import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { endlessPdf, memoryHogPdf, numberedPdf, slowPdf } from '@svc/testing/pdf-fixtures';
import { idle, pdfGates, pdfWorkers, waitForWorkers } from './helpers/pdf-pool-state.ts';

/**
 * The parser pool's admission at its edges, with the spec's numbers shrunk: 2 workers, 2 waiting,
 * the spec's 2 s queue wait, 256 MiB per worker. The test orders its requests by what the pool
 * reports (GET /v1/cache: busy, waiting, starting) rather than by sleeping, and decides when a
 * worker frees: a held document (helpers/slow-pdf-worker.ts) is parsed by the real worker, which
 * then stays busy until the test opens its gate. So the outcomes (who got a worker, who was
 * refused with which code) do not depend on the machine's speed. The one deadline under test here
 * is the queue wait; the parse deadline is a minute, far past any held parse (its own test, with
 * a real endless document, is in pdf-worker-deadlines).
 */
const WORKERS = 2;
const QUEUE_MS = 2000;
const PARSE_MS = 60_000;
const gates = pdfGates();
let svc: TestServer;
test.before(async () => {
  process.env.SVC_TEST_PDF_WORKER_GATES = gates.directory;
  svc = await startTestServer({
    env: {
      SVC_PDF_WORKERS: String(WORKERS),
      SVC_PDF_MAX_PENDING: '2',
      SVC_PDF_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
      SVC_PDF_PARSE_TIMEOUT_MS: String(PARSE_MS),
      SVC_PDF_WORKER_MEMORY_BYTES: String(256 * 1024 * 1024),
      SVC_PDF_RATE_LIMIT: '0',
    },
    testSeams: { pdfWorkerModule: new URL('./helpers/slow-pdf-worker.ts', import.meta.url) },
  });
  // The pool starts on the first parse; both workers are up before the tests count them.
  const first = await upload(numberedPdf(1));
  if (first.status !== 200) throw new Error(`the first parse answered ${first.status} ${first.code}`);
});
test.beforeEach(async () => {
  await waitForWorkers(svc, 'every worker up and idle before the test', idle(WORKERS));
});
test.after.always(async () => {
  await svc?.close();
  gates.remove();
});

const shortPdf = slowPdf(1, 5_000); // about 0.05 s of engine work
const endless = endlessPdf(); // minutes of engine work (built once: it takes seconds)

interface Answer {
  status: number;
  code?: string;
  ms: number;
  timing: Record<string, number>;
  retryAfter: string | null;
}

async function upload(pdf: Buffer, signal?: AbortSignal): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload?max_pages=100&max_chars=400000`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
    body: new Uint8Array(pdf),
    signal,
  });
  const body = (await response.json()) as { code?: string };
  const timing = Object.fromEntries(
    (response.headers.get('server-timing') ?? '')
      .split(', ')
      .filter(Boolean)
      .map((entry) => [entry.split(';')[0]!, Number(entry.split('dur=')[1])]),
  );
  return { status: response.status, code: body.code, ms: performance.now() - started, timing, retryAfter: response.headers.get('retry-after') };
}

const describe = (answer: Answer) => `${answer.status} ${answer.code ?? ''} after ${Math.round(answer.ms)} ms, ${JSON.stringify(answer.timing)}`;

test.serial('two parses admitted, the third waits and gets the worker freed first, the fourth is refused with 503 once the queue wait passes', async (t) => {
  const first = upload(gates.held('queue-a'));
  const second = upload(gates.held('queue-b'));
  await waitForWorkers(svc, 'both workers to run the first two', (state) => state.busy === 2);
  const third = upload(gates.held('queue-c'));
  await waitForWorkers(svc, 'the third to wait for a worker', (state) => state.waiting === 1);

  gates.open('queue-b');
  const b = await second;
  t.is(b.status, 200, describe(b));
  await waitForWorkers(svc, 'the third to run on the freed worker', (state) => state.busy === 2 && state.waiting === 0);

  // Both workers are held by the test: nothing frees while the fourth waits.
  const d = await upload(shortPdf);
  t.log(`fourth: ${describe(d)}`);
  t.is(d.status, 503, describe(d));
  t.is(d.code, 'pdf_queue_timeout');
  t.is(d.retryAfter, '1');
  // Node's timers may fire up to a millisecond early by the clock the server reads.
  t.true(d.timing.worker_queue_ms >= QUEUE_MS - 1, `the fourth waited ${d.timing.worker_queue_ms} ms in the queue`);
  t.true(d.ms >= QUEUE_MS - 1, `refused after ${Math.round(d.ms)} ms`);
  t.is((await pdfWorkers(svc)).busy, 2, 'the first and the third still hold their workers');

  gates.open('queue-a');
  gates.open('queue-c');
  const [a, c] = await Promise.all([first, third]);
  t.is(a.status, 200, describe(a));
  t.is(c.status, 200, describe(c));
  t.true(c.timing.worker_queue_ms > 0, `the third waited ${c.timing.worker_queue_ms} ms for the freed worker`);
  t.true(c.timing.worker_queue_ms < QUEUE_MS, 'and got it within the queue wait');
});

test.serial('with both workers busy and two waiting, the next request is refused at once; the server keeps answering', async (t) => {
  // Two parses that burn their workers' CPU for minutes, until the test goes away.
  const gone = new AbortController();
  const busy = [upload(endless, gone.signal), upload(endless, gone.signal)].map((answer) => answer.catch((error: Error) => error.name));
  await waitForWorkers(svc, 'both workers to run the endless parses', (state) => state.busy === 2);
  const waiting = [upload(shortPdf), upload(shortPdf)];
  await waitForWorkers(svc, 'two parses to wait', (state) => state.waiting === 2);

  const refused = await upload(shortPdf);
  t.is(refused.status, 503, describe(refused));
  t.is(refused.code, 'pdf_queue_full');
  t.is(refused.retryAfter, '1');
  // At once: well before any queue wait could have passed.
  t.true(refused.ms < QUEUE_MS, `refused in ${Math.round(refused.ms)} ms`);
  const health = performance.now();
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
  t.true(performance.now() - health < 1000, 'health answered while the workers parse');
  for (const answer of await Promise.all(waiting)) {
    t.is(answer.status, 503, describe(answer));
    t.is(answer.code, 'pdf_queue_timeout');
  }

  // The client going away stops its parse: both workers are terminated and replaced.
  const stopping = performance.now();
  gone.abort();
  t.deepEqual(await Promise.all(busy), ['AbortError', 'AbortError']);
  await waitForWorkers(svc, 'the stopped workers to be replaced', idle(WORKERS));
  t.log(`workers replaced ${Math.round(performance.now() - stopping)} ms after the clients went away`);
  const next = await Promise.all([upload(numberedPdf(2)), upload(numberedPdf(2))]);
  t.deepEqual(
    next.map((answer) => answer.status),
    [200, 200],
  );
});

test.serial('a worker that passes its memory cap dies alone with a clear 422; the server keeps serving', async (t) => {
  const hog = await upload(memoryHogPdf());
  t.is(hog.status, 422, JSON.stringify(hog));
  t.is(hog.code, 'pdf_too_complex');
  const after = await upload(numberedPdf(1));
  t.is(after.status, 200);
});

async function extractJson(body: Record<string, unknown>): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { code?: string };
  return { status: response.status, code: answer.code, ms: performance.now() - started, timing: {}, retryAfter: response.headers.get('retry-after') };
}

test.serial('with the pool and its waiting room full, a refused URL is still a 422, and a document still a 503', async (t) => {
  const held = ['full-a', 'full-b', 'full-c', 'full-d'];
  const running = held.map((name) => upload(gates.held(name)));
  await waitForWorkers(svc, 'two parses running and two waiting', (state) => state.busy === 2 && state.waiting === 2);

  const refusedUrl = await extractJson({ url: 'https://[fec0::1]/x.pdf' });
  t.is(refusedUrl.status, 422, describe(refusedUrl));
  t.is(refusedUrl.code, 'source_url_refused');
  // A document that needs a worker still meets the full queue, read first or not.
  const document = await extractJson({ data_base64: numberedPdf(1).toString('base64') });
  t.is(document.status, 503, describe(document));
  t.is(document.code, 'pdf_queue_full');

  for (const name of held) gates.open(name);
  await Promise.all(running);
  t.is((await extractJson({ data_base64: numberedPdf(1).toString('base64') })).status, 200, 'the place a refused request took was given back');
});
