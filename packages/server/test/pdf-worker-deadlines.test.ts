import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import pino from 'pino';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { endlessPdf, numberedPdf } from '@svc/testing/pdf-fixtures';
import { waitUntil } from '@svc/testing/wait-until';
import { idle, waitForWorkers } from './helpers/pdf-pool-state.ts';

/**
 * The worker start deadline (spec section 8: 30 s), shrunk to START_MS, and the parse deadline
 * (spec: 30 s), shrunk to PARSE_MS. One worker, loaded through a wrapper module that sleeps
 * before the real worker loads (the thread really does not start), or after its warm-up (a slow
 * engine load) or a parse, for as long as the control file says. A worker is replaced by ending a
 * parse at its deadline (an endless PDF).
 *
 * The machine may be loaded (two suites at once on 2 cores), so each side of a deadline is far
 * from it: work that must pass takes a tenth of its deadline (the real worker's own start comes
 * on top), work that must fail takes minutes, and the moments compared are the server's own (the
 * warnings it logs) rather than when the client read an answer. A bound above a deadline says
 * only that the answer came at that deadline and not at a later event.
 */
const QUEUE_MS = 500; // not under test here: shorter than the slow start, to show that wait is not the queue's
const START_MS = 10_000;
const PARSE_MS = 3000;
const SLOW_BUT_IN_TIME_MS = START_MS / 10;
const NEVER_MS = 120_000;

const directory = mkdtempSync(join(tmpdir(), 'svc-worker-start-'));
const control = join(directory, 'delays.json');
const setDelays = (start: number[], warmup: number[] = [], parse: number[] = []) => writeFileSync(control, JSON.stringify({ start, warmup, parse }));

/** Start-deadline warnings the server logged, with when they were logged. */
const terminations: Array<{ at: number; msg: string }> = [];
/** When the server logged that a parse deadline passed (the worker is terminated, and its replacement's start begins). */
const parseStops: number[] = [];
let svc: TestServer;
test.before(async () => {
  setDelays([]);
  process.env.SVC_TEST_PDF_WORKER_DELAYS = control;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { msg: string };
        if (/deadline; terminated|start deadline/.test(entry.msg)) terminations.push({ at: performance.now(), msg: entry.msg });
        if (/parse deadline passed/.test(entry.msg)) parseStops.push(performance.now());
      }
      done();
    },
  });
  logger = pino({ level: 'warn' }, sink);
  svc = await startServer();
  // The first worker has started and parsed before the timings below matter.
  const first = await upload(numberedPdf(1));
  if (first.status !== 200) throw new Error(`the first worker did not start: ${JSON.stringify(first)}`);
});
test.beforeEach(async () => {
  await waitForWorkers(svc, 'the worker up and idle before the test', idle(1));
});
test.after.always(async () => {
  await svc?.close();
  rmSync(directory, { recursive: true, force: true });
});

let logger: pino.Logger;
const startServer = () =>
  startTestServer({
    logger,
    env: {
      SVC_PDF_WORKERS: '1',
      SVC_PDF_MAX_PENDING: '2',
      SVC_PDF_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
      SVC_PDF_WORKER_START_TIMEOUT_MS: String(START_MS),
      SVC_PDF_PARSE_TIMEOUT_MS: String(PARSE_MS),
      SVC_PDF_RATE_LIMIT: '0',
    },
    testSeams: { pdfWorkerModule: new URL('./helpers/slow-pdf-worker.ts', import.meta.url) },
  });

interface Answer {
  status: number;
  code?: string;
  ms: number;
  retryAfter: string | null;
  timing: Record<string, number>;
}

async function upload(pdf: Buffer): Promise<Answer> {
  const started = performance.now();
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
  return { status: response.status, code: body.code, ms: performance.now() - started, retryAfter: response.headers.get('retry-after'), timing };
}

const endless = endlessPdf(); // minutes of engine work (built once: it takes seconds)

/**
 * Ends the worker's parse at its deadline, so Piscina terminates it and a new thread starts.
 * Answers when the server logged the stop: the replacement's start deadline began just after.
 */
async function replaceWorker(): Promise<number> {
  const stops = parseStops.length;
  const ended = await upload(endless);
  if (ended.code !== 'pdf_parse_timeout') throw new Error(`expected a parse timeout, got ${JSON.stringify(ended)}`);
  const stopped = parseStops[stops];
  if (stopped === undefined) throw new Error('the server logged no parse deadline for the 504');
  return stopped;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

test.serial('a worker that starts slowly but within the deadline serves the request that waited for it, past the queue wait', async (t) => {
  setDelays([SLOW_BUT_IN_TIME_MS]);
  const replaced = await replaceWorker();
  const answer = await upload(numberedPdf(2));
  t.log(`served after ${Math.round(answer.ms)} ms, worker_start_ms ${answer.timing.worker_start_ms}`);
  t.is(answer.status, 200, JSON.stringify(answer));
  t.true(answer.ms > QUEUE_MS && answer.ms > SLOW_BUT_IN_TIME_MS, 'the request waited for the starting worker, beyond the queue wait');
  t.true(answer.timing.worker_start_ms >= SLOW_BUT_IN_TIME_MS, `worker_start_ms ${answer.timing.worker_start_ms}`);
  // Past the deadline, the worker that started in time is left alone and keeps serving.
  await sleep(replaced + START_MS + 1000 - performance.now());
  t.deepEqual(terminations, [], 'no worker was terminated');
  t.is((await upload(numberedPdf(1))).status, 200);
});

test.serial(
  'a worker that does not start within the deadline is terminated; the waiting request gets 503 pdf_worker_unavailable; the pool recovers',
  async (t) => {
    setDelays([NEVER_MS, NEVER_MS]); // this replacement and the next one hang; the third starts at once
    const killed = await replaceWorker();
    const waiting = await upload(numberedPdf(1));
    t.log(`answered after ${Math.round(waiting.ms)} ms: ${waiting.status} ${waiting.code}`);
    t.is(waiting.status, 503);
    t.is(waiting.code, 'pdf_worker_unavailable');
    t.is(waiting.retryAfter, '5');
    t.true(waiting.ms >= START_MS && waiting.ms < 2 * START_MS, `503 after ${Math.round(waiting.ms)} ms: at its start deadline, not a later one`);

    await waitUntil(
      () => `both hanging threads to be terminated (so far: ${JSON.stringify(terminations)})`,
      () => terminations.length >= 2,
      { timeoutMs: 4 * START_MS },
    );
    t.is(terminations.length, 2, JSON.stringify(terminations));
    const [first, second] = terminations.map((entry) => entry.at);
    t.log(`terminated ${Math.round(first! - killed)} ms after the replacement began, then ${Math.round(second! - first!)} ms later`);
    // `killed` is when the server logged the parse stop; the replacement's deadline began just after.
    t.true(first! - killed >= START_MS - 5 && first! - killed < 2 * START_MS, 'the first hanging thread ended at the deadline');
    t.true(second! - first! >= START_MS - 5 && second! - first! < 2 * START_MS, 'its replacement, hanging too, ended at the deadline');
    t.regex(terminations[0]!.msg, /did not start within its deadline; terminated/);

    // The third thread starts at once (within its deadline, long before the hanging ones would have woken).
    const recovered = await upload(numberedPdf(2));
    t.is(recovered.status, 200, JSON.stringify(recovered));
    t.is(terminations.length, 2, 'the healthy worker is left alone');
  },
);

test.serial(
  'a first worker that does not start is terminated at the deadline; the request waiting for it gets 503 pdf_worker_unavailable; its replacement serves',
  async (t) => {
    await svc.close();
    terminations.length = 0;
    setDelays([NEVER_MS]);
    const created = performance.now();
    svc = await startServer(); // the pool is built in here, after the database is ready
    const listening = performance.now();
    const waiting = await upload(numberedPdf(1));
    t.log(`answered after ${Math.round(waiting.ms)} ms: ${waiting.status} ${waiting.code}`);
    t.is(waiting.status, 503);
    t.is(waiting.code, 'pdf_worker_unavailable');
    t.is(waiting.retryAfter, '5');
    t.true(waiting.ms >= START_MS && waiting.ms < 2 * START_MS, 'it waited the start deadline, not the queue wait');
    t.is(terminations.length, 1, JSON.stringify(terminations));
    const terminated = terminations[0]!.at;
    t.true(
      terminated - created >= START_MS && terminated - listening < 2 * START_MS,
      `terminated ${Math.round(terminated - created)} ms after createServer began, ${Math.round(terminated - listening)} ms after it listened`,
    );
    const recovered = await upload(numberedPdf(2));
    t.is(recovered.status, 200, JSON.stringify(recovered));
    t.is(terminations.length, 1);
  },
);

test.serial('a warm-up (engine load) that outlasts the deadline is aborted and its worker terminated; the pool recovers', async (t) => {
  setDelays([], [NEVER_MS]);
  terminations.length = 0;
  const killed = await replaceWorker();
  const waiting = await upload(numberedPdf(1));
  t.is(waiting.status, 503);
  t.is(waiting.code, 'pdf_worker_unavailable');
  await waitUntil(
    () => `the thread whose warm-up hangs to be terminated (so far: ${JSON.stringify(terminations)})`,
    () => terminations.length >= 1,
    { timeoutMs: 3 * START_MS },
  );
  t.is(terminations.length, 1, JSON.stringify(terminations));
  t.regex(terminations[0]!.msg, /did not load its engine within the start deadline; terminated/);
  const after = terminations[0]!.at - killed;
  t.log(`warm-up aborted ${Math.round(after)} ms after the replacement began`);
  // The warm-up's deadline began once the replacement thread had loaded, after the parse stop.
  t.true(after >= START_MS - 5 && after < 2 * START_MS, `aborted after ${Math.round(after)} ms`);
  const recovered = await upload(numberedPdf(2));
  t.is(recovered.status, 200, JSON.stringify(recovered));
});

test.serial(
  'the parse deadline: a parse that keeps its worker busy under it is answered, with that time in its round trip; one held past it is 504',
  async (t) => {
    terminations.length = 0;
    const UNDER_MS = PARSE_MS / 10;
    setDelays([], [], [UNDER_MS, NEVER_MS]);
    const under = await upload(numberedPdf(1));
    t.is(under.status, 200, JSON.stringify(under));
    // The worker's timer and the main thread's clock differ by a millisecond or two (seen: 1398.7 ms for a 1400 ms busy wait).
    t.true(under.timing.worker_roundtrip_ms >= UNDER_MS - 5, `round trip ${under.timing.worker_roundtrip_ms} ms`);
    const over = await upload(numberedPdf(1));
    t.log(`under: ${Math.round(under.ms)} ms, over: ${over.status} after ${Math.round(over.ms)} ms`);
    t.is(over.status, 504);
    t.is(over.code, 'pdf_parse_timeout');
    t.true(over.timing.worker_roundtrip_ms >= PARSE_MS - 5, `stopped after a round trip of ${over.timing.worker_roundtrip_ms} ms`);
    t.true(over.ms < NEVER_MS / 4, `504 after ${Math.round(over.ms)} ms: at the deadline, not when the held parse would have ended`);
    await waitForWorkers(svc, 'the terminated worker to be replaced', idle(1));
    t.is((await upload(numberedPdf(1))).status, 200, 'the terminated worker was replaced');
    t.deepEqual(terminations, []);
  },
);

test.serial('a parse of endless engine work is stopped at the parse deadline with 504; the server answers meanwhile; the worker is replaced', async (t) => {
  terminations.length = 0;
  const ended = upload(endless);
  await waitForWorkers(svc, 'the worker to run the endless parse', (state) => state.busy === 1);
  const health = performance.now();
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
  t.true(performance.now() - health < 1000, 'health answered while the worker parses');
  const answer = await ended;
  t.log(`504 after ${Math.round(answer.ms)} ms, round trip ${answer.timing.worker_roundtrip_ms} ms`);
  t.is(answer.status, 504);
  t.is(answer.code, 'pdf_parse_timeout');
  t.true(answer.timing.worker_roundtrip_ms >= PARSE_MS - 5, `stopped after a round trip of ${answer.timing.worker_roundtrip_ms} ms`);
  t.true(answer.ms < NEVER_MS / 4, 'stopped at the deadline, not when the work would have ended');
  await waitForWorkers(svc, 'the terminated worker to be replaced', idle(1));
  t.is((await upload(numberedPdf(2))).status, 200);
  t.deepEqual(terminations, [], 'its replacement started in time');
});
