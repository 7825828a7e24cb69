import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The first requests after the lazy worker start wait for the worker to load and warm up. That
 * wait belongs to the worker start deadline and is timed as `worker_start_ms`; only the wait for
 * a busy worker is bounded by the queue deadline and timed as `worker_queue_ms`. Before, the queue
 * wait ran from arrival: on a loaded machine (two suites at once on 2 cores) the start ate it, and
 * a request queued behind the first parse got 503 `pdf_queue_timeout`. Here one worker's warm-up
 * takes WARM_MS more than it does and each parse PARSE_MS more (helpers/slow-pdf-worker.ts), so
 * the second request waits WARM_MS for the start and then PARSE_MS for the busy worker: in all
 * longer than the queue deadline, each part shorter.
 */
const QUEUE_MS = 3000;
const WARM_MS = 2000;
const PARSE_MS = 1800;

const directory = mkdtempSync(join(tmpdir(), 'svc-worker-start-phase-'));
const control = join(directory, 'delays.json');
let svc: TestServer;
test.before(async () => {
  writeFileSync(control, JSON.stringify({ start: [], warmup: [WARM_MS], parse: [PARSE_MS, PARSE_MS] }));
  process.env.SVC_TEST_PDF_WORKER_DELAYS = control;
  svc = await startTestServer({
    env: {
      SVC_PDF_WORKERS: '1',
      SVC_PDF_MAX_PENDING: '2',
      SVC_PDF_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
      SVC_PDF_WORKER_START_TIMEOUT_MS: '30000',
      SVC_PDF_RATE_LIMIT: '0',
    },
    testSeams: { pdfWorkerModule: new URL('./helpers/slow-pdf-worker.ts', import.meta.url) },
  });
});
test.after.always(async () => {
  await svc?.close();
  rmSync(directory, { recursive: true, force: true });
});

async function upload(): Promise<{ status: number; code?: string; timing: Record<string, number> }> {
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
    body: new Uint8Array(numberedPdf(1)),
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
  const answers = await Promise.all([upload(), upload()]);
  for (const answer of answers)
    t.log(`${answer.status} ${answer.code ?? ''} worker_start_ms ${answer.timing.worker_start_ms}, worker_queue_ms ${answer.timing.worker_queue_ms}`);
  for (const answer of answers) t.is(answer.status, 200, JSON.stringify(answer));
  const [first, second] = answers.sort((a, b) => a.timing.worker_queue_ms! - b.timing.worker_queue_ms!);
  for (const answer of [first!, second!]) t.true(answer.timing.worker_start_ms! >= WARM_MS, `the warm-up is worker_start_ms: ${JSON.stringify(answer.timing)}`);
  t.true(first!.timing.worker_queue_ms! < WARM_MS, `the first served waited for no busy worker: ${JSON.stringify(first!.timing)}`);
  t.true(
    second!.timing.worker_queue_ms! >= PARSE_MS - 50,
    `the second waited for the first's parse, timed as worker_queue_ms: ${JSON.stringify(second!.timing)}`,
  );
});
