import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { pdfGates, waitForWorkers } from './helpers/pdf-pool-state.ts';

/**
 * The first requests after the lazy worker start wait for the worker to load and warm up. That
 * wait belongs to the worker start deadline and is timed as `worker_start_ms`; only the wait for
 * a busy worker is bounded by the queue deadline and timed as `worker_queue_ms`. Before, the queue
 * wait ran from arrival: on a loaded machine (two suites at once on 2 cores) the start ate it, and
 * a request queued behind the first parse got 503 `pdf_queue_timeout`. Here one worker's warm-up
 * takes WARM_MS more than it does (helpers/slow-pdf-worker.ts), longer than the queue deadline and
 * an eighth of the start deadline, so a request refused by the wrong deadline would show. The
 * first request is a held document: the test frees its worker HOLD_MS after the pool reports it
 * running, so the second's wait for a busy worker is at least that, and far under the queue
 * deadline whatever the machine's load (seen: 0.7 s at load 14 with a 0.2 s hold).
 */
const QUEUE_MS = 4000;
const START_MS = 40_000;
const WARM_MS = QUEUE_MS + 1000;
const HOLD_MS = 200;

const directory = mkdtempSync(join(tmpdir(), 'svc-worker-start-phase-'));
const control = join(directory, 'delays.json');
const gates = pdfGates();
let svc: TestServer;
test.before(async () => {
  writeFileSync(control, JSON.stringify({ start: [], warmup: [WARM_MS], parse: [] }));
  process.env.SVC_TEST_PDF_WORKER_DELAYS = control;
  process.env.SVC_TEST_PDF_WORKER_GATES = gates.directory;
  svc = await startTestServer({
    env: {
      SVC_PDF_WORKERS: '1',
      SVC_PDF_MAX_PENDING: '2',
      SVC_PDF_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
      SVC_PDF_WORKER_START_TIMEOUT_MS: String(START_MS),
      SVC_PDF_RATE_LIMIT: '0',
    },
    testSeams: { pdfWorkerModule: new URL('./helpers/slow-pdf-worker.ts', import.meta.url) },
  });
});
test.after.always(async () => {
  await svc?.close();
  rmSync(directory, { recursive: true, force: true });
  gates.remove();
});

async function upload(pdf: Buffer): Promise<{ status: number; code?: string; timing: Record<string, number> }> {
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, {
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
  return { status: response.status, code: body.code, timing };
}

test('requests that arrive as the workers start wait for the start under its deadline, and only the wait for a busy worker under the queue deadline', async (t) => {
  const firstSent = performance.now();
  const firstAnswer = upload(gates.held('first'));
  await waitForWorkers(svc, 'the first request to be admitted (it starts the pool)', (state) => state.entries === 1);
  const secondSent = performance.now();
  const secondAnswer = upload(numberedPdf(1));
  const arrived = await waitForWorkers(svc, 'the second request to be admitted', (state) => state.entries === 2);
  t.true(arrived.starting > 0, `both arrived while the worker started: ${JSON.stringify(arrived)}`);
  await waitForWorkers(svc, 'the worker to start and run the first', (state) => state.starting === 0 && state.busy === 1 && state.waiting === 1);
  await sleep(HOLD_MS);
  gates.open('first');

  const [first, second] = await Promise.all([firstAnswer, secondAnswer]);
  for (const answer of [first, second])
    t.log(`${answer.status} ${answer.code ?? ''} worker_start_ms ${answer.timing.worker_start_ms}, worker_queue_ms ${answer.timing.worker_queue_ms}`);
  t.is(first.status, 200, JSON.stringify(first));
  t.is(second.status, 200, JSON.stringify(second));
  t.true(first.timing.worker_start_ms! >= WARM_MS, `the warm-up is the first's worker_start_ms: ${JSON.stringify(first.timing)}`);
  t.true(second.timing.worker_start_ms! >= WARM_MS - (secondSent - firstSent), `and the second's, from its arrival: ${JSON.stringify(second.timing)}`);
  t.true(first.timing.worker_queue_ms! < HOLD_MS, `the first waited for no busy worker: ${JSON.stringify(first.timing)}`);
  t.true(
    second.timing.worker_queue_ms! >= HOLD_MS - 1 && second.timing.worker_queue_ms! < QUEUE_MS,
    `the second waited for the first's parse, timed as worker_queue_ms: ${JSON.stringify(second.timing)}`,
  );
  t.true(second.timing.worker_start_ms! + second.timing.worker_queue_ms! > QUEUE_MS, 'in all longer than the queue deadline, and still served');
});
