import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import pino from 'pino';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { idle, pdfWorkers, waitForWorkers } from './helpers/pdf-pool-state.ts';

/**
 * A PDF worker whose module throws while loading (a missing file or dependency). The pool used to
 * replace each failed thread at once, and the replacement failed the same way, a few hundred
 * milliseconds later, for as long as requests came; a request waited the whole start deadline
 * (30 s, START_MS here) before its 503. Now the pool stops: waiting requests get 503
 * `pdf_worker_unavailable` at once with `Retry-After`, no thread starts until a back-off (1 s
 * doubling to 30 s, jittered) has passed, and the first request after it starts the pool again.
 * The module fails while the control file says `fail` (helpers/load-failing-pdf-worker.ts).
 */
const START_MS = 30_000;

const directory = mkdtempSync(join(tmpdir(), 'svc-worker-unloadable-'));
const control = join(directory, 'load');
/** The server's log lines saying the pool stopped because the module failed to load. */
let loadFailures = 0;
let svc: TestServer;
test.before(async () => {
  writeFileSync(control, 'fail');
  process.env.SVC_TEST_PDF_WORKER_LOAD = control;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) if (/failed to load/.test((JSON.parse(line) as { msg: string }).msg)) loadFailures += 1;
      done();
    },
  });
  svc = await startTestServer({
    logger: pino({ level: 'error' }, sink),
    env: { SVC_PDF_WORKERS: '2', SVC_PDF_WORKER_START_TIMEOUT_MS: String(START_MS), SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfWorkerModule: new URL('./helpers/load-failing-pdf-worker.ts', import.meta.url) },
  });
});
test.after.always(async () => {
  await svc?.close();
  rmSync(directory, { recursive: true, force: true });
});

async function upload(): Promise<{ status: number; code?: string; ms: number; retryAfter: number }> {
  const started = performance.now();
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
    body: new Uint8Array(numberedPdf(1)),
  });
  const body = (await response.json()) as { code?: string };
  return { status: response.status, code: body.code, ms: performance.now() - started, retryAfter: Number(response.headers.get('retry-after')) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial(
  'a worker module that cannot load: 503 pdf_worker_unavailable at once, no thread during the back-off, and the pool starts again after it',
  async (t) => {
    const first = await upload();
    t.log(`first: ${first.status} ${first.code} after ${Math.round(first.ms)} ms, Retry-After ${first.retryAfter}`);
    t.like(first, { status: 503, code: 'pdf_worker_unavailable' });
    t.true(first.ms < START_MS / 3, `answered after ${Math.round(first.ms)} ms, not at the start deadline`);
    t.true(first.retryAfter >= 1 && first.retryAfter <= 30, `Retry-After ${first.retryAfter}`);
    t.is(loadFailures, 1, 'both threads failed, the pool stopped once');

    // After each back-off a request starts the pool again, which fails the same way; the back-off
    // doubles (the third is 2 to 4 s).
    let last = first;
    for (const failures of [2, 3]) {
      await sleep(last.retryAfter * 1000 + 100);
      last = await upload();
      t.like(last, { status: 503, code: 'pdf_worker_unavailable' });
      t.is(loadFailures, failures, 'the pool was started again after the back-off');
    }
    t.true(last.retryAfter >= 2, `the third back-off is at least 2 s: Retry-After ${last.retryAfter}`);

    // A request inside the back-off is refused without starting a thread: the pool reports none
    // running or starting, and no start fails later (loadFailures stays 3 past the back-off). The
    // threads of this whole process are not counted: the server's other one-off workers (the
    // discovery documents' build) may start at any time, which failed this test once in CI.
    const refused = await upload();
    t.log(`inside the back-off: ${refused.status} ${refused.code} after ${Math.round(refused.ms)} ms, Retry-After ${refused.retryAfter}`);
    t.like(refused, { status: 503, code: 'pdf_worker_unavailable' });
    t.true(refused.retryAfter >= 1, `Retry-After ${refused.retryAfter}`);
    // Threads, not `starting`: that count may still hold the failed start's warm-up task until it
    // settles (read as starting 1 with no thread in a CI run), which is bookkeeping, not a thread.
    t.is((await pdfWorkers(svc)).threads, 0, 'no thread was started during the back-off');
    t.is(loadFailures, 3);

    // The module loads again (the file is back): the first request after the back-off is served.
    writeFileSync(control, 'ok');
    await sleep(refused.retryAfter * 1000 + 100);
    const served = await upload();
    t.is(served.status, 200, JSON.stringify(served));
    t.is(loadFailures, 3);
    // The failed pools' starts are all settled: a start count left over from them would hold every
    // later wait in the start phase (30 s) instead of the queue's (2 s).
    const settled = await waitForWorkers(svc, 'every worker of the new pool up and idle, no start left counted', idle(2), 20_000);
    t.log(`after recovery: ${JSON.stringify(settled)}`);
  },
);
