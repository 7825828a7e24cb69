import http from 'node:http';
import test from 'ava';
import fc from 'fast-check';
import { contract, walkContract, type RouteDefinition } from '@svc/schemas';
import {
  checkAnswer,
  fixedRequests,
  fuzzTarget,
  requestArbitrary,
  type Credentials,
  type FuzzAnswer,
  type FuzzRequest,
  type FuzzTarget,
} from '@svc/testing/contract-fuzz';
import { createKey, signInAgent } from '@svc/testing/identity';
import { LoopHold } from './helpers/loop-hold.ts';
import { STALL_BUDGET_MS } from './helpers/stall-meter.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The standing contract fuzzing suite: every route of the contract (read with walkContract, so
 * routes added later are covered with no new test code) gets requests generated from its own
 * JSON Schemas by fast-check: valid ones, mutated ones (missing, extra and wrong-typed members,
 * boundary numbers, huge, empty, NUL and lone-surrogate strings, deeply nested and malformed
 * JSON, duplicate query keys, wrong and missing content types), every other method, oversized
 * bodies and headers, with no credential and with each kind. Every answer: never a 5xx (but a
 * documented 503 state), never slower than the route's deadline, a body that fits the contract,
 * errors with a stable code and the request id, no 2xx to an invalid request; no event-loop delay
 * over the stall budget (SVC_STALL_BUDGET_MS, 100 ms) while it runs; and the server healthy afterwards.
 *
 * Bounded by default (SVC_FUZZ_RUNS requests in all, spread over the routes); SVC_FUZZ_SEED
 * replays a failing run (the seed is printed with every failure).
 */
const TOTAL_RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 2500);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.SVC_FUZZ_SEED);
/** Longest an answer may take on a route that states no deadline of its own. */
const ANSWER_DEADLINE_MS = 15_000;

let svc: TestServer;
let credentials: Credentials = {};
let targets: FuzzTarget[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
let sent = 0;
/** The worst event-loop delay of the whole run, and the request in flight when it was seen. */
/** The main thread's CPU-time holds (helpers/loop-hold.ts): a thread the machine did not schedule is not a stall. */
let loop: LoopHold;
let worstLoop = { ms: 0, label: '' };

test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on', SVC_DEMO_TOKEN: 'fuzz-demo-token' } });
  const { client, session } = await signInAgent(svc);
  const key = await createKey(client, [
    'inference:invoke',
    'requests:read',
    'requests:write',
    'jobs:read',
    'jobs:write',
    'models:read',
    'billing:read',
    'billing:write',
  ]);
  credentials = {
    none: undefined,
    operator: `Bearer ${svc.operatorToken}`,
    agent: `Bearer ${session.accessToken}`,
    developerKey: `Bearer ${key.secret}`,
    demo: 'Bearer fuzz-demo-token',
    unknownBearer: 'Bearer fuzz-unknown-bearer',
    basic: `Basic ${Buffer.from('fuzz:secret').toString('base64')}`,
  };
  targets = walkContract(contract).map(({ id, route }) => fuzzTarget(id, route, route.surface === 'api' ? svc.apiUrl : svc.baseUrl));
  loop = new LoopHold();
});
test.after.always(async () => {
  loop?.stop();
  agent.destroy();
  await svc?.close();
});

/** A route whose answer is only ever an event stream, which runs until the client leaves. */
const isEndless = (route: RouteDefinition) => Object.values(route.responses).some((spec) => (spec as { kind?: string }).kind === 'sse');

/** Sends one request over node:http (exact headers, a declared length it does not keep). */
function send(request: FuzzRequest, deadlineMs: number, endless = false): Promise<FuzzAnswer> {
  sent++;
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const headers = { ...request.headers };
    if (request.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
    // A request that declares more body than it sends must not leave its socket to the next one.
    const honest = request.body === undefined || Number(headers['content-length']) === Buffer.byteLength(request.body);
    const outgoing = http.request(
      { agent: honest ? agent : false, host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: request.method, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // A push stream (the board's watch) never ends on its own: its first event is the answer.
          if (String(response.headers['content-type']).startsWith('text/event-stream') && endless && chunk.includes('\n\n')) {
            response.destroy();
            response.emit('end');
          }
        });
        response.once('end', () => {
          clearTimeout(timer);
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          resolve({ status: response.statusCode ?? 0, headers: answerHeaders, text: Buffer.concat(chunks).toString('utf8') });
          // A request whose declared body was not all sent leaves its socket unusable.
          if (!outgoing.writableFinished) outgoing.destroy();
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${deadlineMs} ms (a hang)`)), deadlineMs);
    // The server may answer and close before the whole body is written (413): not a failure,
    // as long as the answer arrives; a connection closed with no answer at all is one.
    let answered = false;
    outgoing.on('response', () => (answered = true));
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if ((error.code === 'EPIPE' || error.code === 'ECONNRESET') && answered) return;
      clearTimeout(timer);
      reject(new Error(`the connection failed with no answer: ${error.code ?? error.message}`));
    });
    if (request.body !== undefined) outgoing.write(request.body);
    outgoing.end();
  });
}

/**
 * The longest an answer of the route may take: reading its body within its body deadline, then
 * its work within the deadlines the server states for it (the PDF pool's queue, worker start,
 * parse and URL fetch for the routes it serves), or ANSWER_DEADLINE_MS where it states none.
 */
function answerDeadlineMs(target: FuzzTarget): number {
  const { route } = target;
  const { pdf } = svc.server.config;
  const pooled = route.tags?.some((tag) => tag === 'pdf' || tag === 'documents');
  const work = pooled ? pdf.queueTimeoutMs + pdf.workerStartTimeoutMs + pdf.parseTimeoutMs + pdf.fetchTimeoutMs : ANSWER_DEADLINE_MS;
  return work + (route.body ? (route.bodyTimeoutMs ?? svc.server.config.http.bodyTimeoutMs) : 0);
}

async function check(target: FuzzTarget, request: FuzzRequest): Promise<void> {
  const deadlineMs = answerDeadlineMs(target);
  const began = performance.now();
  const answer = await send(request, deadlineMs, isEndless(target.route)).catch((error: Error) => {
    throw new Error(`${target.id}: ${error.message}\n  request: ${request.label}`);
  });
  const tookMs = performance.now() - began;
  // Windows cover the whole run, background work of earlier requests (a job's items) included:
  // each is named after the request whose answer closed it.
  let loopMs = loop.take();
  if (loopMs > STALL_BUDGET_MS) {
    // Other load on the machine can hold a window too: a stall this request causes repeats when it is sent again.
    await send(request, deadlineMs, isEndless(target.route)).catch(() => undefined);
    loopMs = Math.min(loopMs, loop.take());
  }
  if (loopMs > worstLoop.ms) worstLoop = { ms: loopMs, label: `${target.id}: ${request.label.slice(0, 200)}` };
  if (tookMs > deadlineMs)
    throw new Error(`${target.id}: answered in ${tookMs.toFixed(0)} ms, past the route's ${deadlineMs} ms deadline\n  request: ${request.label}`);
  const problem = checkAnswer(target, request, answer);
  if (problem) throw new Error(`${target.id}: ${problem}\n  request: ${request.label}`);
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

test.serial('every route of the contract is fuzzed from its own schemas', async (t) => {
  t.true(targets.length > 0);
  const runsPerRoute = Math.max(10, Math.ceil(TOTAL_RUNS / targets.length));
  t.log(`seed ${SEED} (SVC_FUZZ_SEED replays it), ${targets.length} routes, ${runsPerRoute} generated requests each`);
  for (const target of targets) {
    const served = new Set(
      targets
        .filter((other) => other.route.path === target.route.path)
        .flatMap((other) => (other.route.method === 'GET' ? ['GET', 'HEAD'] : [other.route.method])),
    );
    for (const request of fixedRequests(
      target,
      METHODS.filter((method) => !served.has(method)),
      svc.server.config.http.maxHeaderBytes,
    ))
      await check(target, request);
    await fc.assert(
      fc.asyncProperty(requestArbitrary(target, credentials), (request) => check(target, request)),
      { numRuns: runsPerRoute, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  }
  t.log(`${sent} requests sent`);
});

test.serial('no request of the fuzzing held the event loop past the stall budget', (t) => {
  t.log(`worst event-loop delay ${worstLoop.ms.toFixed(0)} ms (budget ${STALL_BUDGET_MS} ms), during ${worstLoop.label || 'nothing'}`);
  t.true(worstLoop.ms <= STALL_BUDGET_MS, `the event loop was held ${worstLoop.ms.toFixed(0)} ms during ${worstLoop.label}`);
});

test.serial('the server is healthy after the fuzzing', async (t) => {
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
  t.is((await fetch(`${svc.baseUrl}/readyz`)).status, 200);
  // The credentials the fuzzer carried still work: nothing it sent broke them.
  t.is((await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: credentials.developerKey! } })).status, 200);
  t.is((await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: credentials.operator! } })).status, 200);
});
