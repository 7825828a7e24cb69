import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { endlessPdf, memoryHogPdf, numberedPdf, slowPdf } from '@svc/testing/pdf-fixtures';

/**
 * The parser pool at its edges, with the spec's numbers shrunk so the test is fast: 2 workers,
 * 2 waiting, the spec's 2 s queue wait, a 5 s parse deadline, 256 MiB per worker. The machine
 * may be busy, so durations are chosen with wide margins: `endless` takes minutes of work (it
 * always meets the deadline), `shortPdf` takes well under a second even on a loaded machine.
 */
const QUEUE_MS = 2000;
const PARSE_MS = 5000;
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({
    env: {
      SVC_PDF_WORKERS: '2',
      SVC_PDF_MAX_PENDING: '2',
      SVC_PDF_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
      SVC_PDF_PARSE_TIMEOUT_MS: String(PARSE_MS),
      SVC_PDF_WORKER_MEMORY_BYTES: String(256 * 1024 * 1024),
      SVC_PDF_RATE_LIMIT: '0',
    },
  });
  // Both workers have parsed before the timings below matter.
  await Promise.all([upload(slowPdf(1, 5_000)), upload(slowPdf(1, 5_000))]);
});
test.after.always(async () => {
  await svc?.close();
});

const endless = endlessPdf(); // minutes of work, no text: always meets the deadline
const shortPdf = slowPdf(1, 5_000); // about 0.05 s idle, under 1.5 s loaded
// The second upload below must still hold its worker when the third arrives 50 ms later, and free
// it before the third's 2 s queue wait ends: about 0.3 s idle (shortPdf, 0.05 s, had ended first
// on a quiet machine, so the third never queued), well under 2 s loaded.
const heldPdf = slowPdf(1, 30_000);

interface Answer {
  status: number;
  code?: string;
  ms: number;
  timing: Record<string, number>;
  retryAfter: string | null;
}

async function upload(pdf: Buffer, query = '?max_pages=100&max_chars=400000'): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
    body: new Uint8Array(pdf),
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial('two parses admitted, the third queued then given a worker, the fourth refused with 503 once the queue wait passes', async (t) => {
  const first = upload(endless);
  const second = upload(heldPdf); // frees its worker for the third
  await sleep(50);
  const third = upload(endless);
  await sleep(50);
  const fourth = upload(shortPdf);
  const [a, b, c, d] = await Promise.all([first, second, third, fourth]);
  t.log([a, b, c, d].map((answer) => `${answer.status} ${answer.code ?? ''} ${Math.round(answer.ms)} ms`).join(', '));
  t.is(a.status, 504, 'first admitted, stopped at the parse deadline');
  t.is(a.code, 'pdf_parse_timeout');
  t.true(a.ms >= PARSE_MS && a.ms < PARSE_MS + 2000, `first stopped after ${Math.round(a.ms)} ms`);
  t.is(b.status, 200, 'second admitted and served');
  t.is(c.status, 504, 'third waited, then got the freed worker and ran to the deadline');
  t.is(c.code, 'pdf_parse_timeout');
  t.true(c.timing.worker_queue_ms > 0, `third waited ${c.timing.worker_queue_ms} ms`);
  t.is(d.status, 503);
  t.is(d.code, 'pdf_queue_timeout');
  t.is(d.retryAfter, '1');
  t.true(d.ms >= QUEUE_MS && d.ms < QUEUE_MS + 1500, `fourth refused after ${Math.round(d.ms)} ms`);
  // The terminated workers were replaced.
  const next = await Promise.all([upload(numberedPdf(2)), upload(numberedPdf(2))]);
  t.deepEqual(
    next.map((answer) => answer.status),
    [200, 200],
  );
});

test.serial('with both workers busy and two waiting, the next request is refused at once; the server keeps answering', async (t) => {
  const busy = [upload(endless), upload(endless)];
  await sleep(100);
  const waiting = [upload(shortPdf), upload(shortPdf)];
  await sleep(100);
  const refused = await upload(shortPdf);
  t.is(refused.status, 503);
  t.is(refused.code, 'pdf_queue_full');
  t.true(refused.ms < QUEUE_MS / 2, `refused in ${Math.round(refused.ms)} ms`);
  const health = performance.now();
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
  t.true(performance.now() - health < 1000, 'health answered while the workers parse');
  for (const answer of await Promise.all(waiting)) {
    t.is(answer.status, 503);
    t.is(answer.code, 'pdf_queue_timeout');
  }
  for (const answer of await Promise.all(busy)) t.is(answer.code, 'pdf_parse_timeout');
});

test.serial('a worker that passes its memory cap dies alone with a clear 422; the server keeps serving', async (t) => {
  const hog = await upload(memoryHogPdf());
  t.is(hog.status, 422, JSON.stringify(hog));
  t.is(hog.code, 'pdf_too_complex');
  const after = await upload(numberedPdf(1));
  t.is(after.status, 200);
});
