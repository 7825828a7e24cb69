import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { defineContract, defineRoute, type ErrorBody } from '@svc/schemas';
import {
  AuthenticationError,
  BadRequestError,
  ClientError,
  ConflictError,
  createContractClient,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  resolveOptions,
  ServerError,
  ServiceUnavailableError,
  GatewayTimeoutError,
  SvcError,
  TimeoutError,
  Transport,
  UnsupportedMediaTypeError,
  ValidationError,
  type ClientOptions,
} from '../src/index.ts';
// The client package never depends on the server; its tests borrow the server's test helper.
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The transport against a small HTTP server this test scripts: it stands for "a server that
 * answers 503 or 429", which a real svc server does not do on demand.
 */
const Thing = z.object({ id: z.string(), name: z.string() });
const fakeContract = defineContract({
  get: defineRoute({
    method: 'GET',
    path: '/v1/things/:id',
    surface: 'base',
    auth: { kind: 'public' },
    summary: 'Read',
    params: z.object({ id: z.string() }),
    responses: { 200: Thing },
  }),
  create: defineRoute({
    method: 'POST',
    path: '/v1/things/:id',
    surface: 'base',
    auth: { kind: 'public' },
    summary: 'Create',
    params: z.object({ id: z.string() }),
    body: z.object({ name: z.string() }),
    responses: { 201: Thing },
  }),
  /** A route that stores its first answer under the Idempotency-Key (its headers declare one). */
  createOnce: defineRoute({
    method: 'POST',
    path: '/v1/things/:id',
    surface: 'base',
    auth: { kind: 'public' },
    summary: 'Create once per key',
    params: z.object({ id: z.string() }),
    headers: z.object({ 'idempotency-key': z.string().optional() }),
    body: z.object({ name: z.string() }),
    responses: { 201: Thing },
  }),
});

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  delayMs?: number;
}
interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  at: number;
}

/** Per path: how to answer the n-th request (0-based), and every request seen. */
const scripts = new Map<string, (attempt: number) => Answer>();
const seen = new Map<string, Seen[]>();
let fake: Server;
let svc: TestServer | undefined;
let fakeUrl: string;

test.before(async () => {
  fake = createServer((request, response) => {
    const path = request.url!.split('?')[0]!;
    const log = seen.get(path) ?? [];
    seen.set(path, log);
    log.push({ method: request.method!, headers: request.headers, at: performance.now() });
    request.resume();
    const answer = scripts.get(path)?.(log.length - 1) ?? { status: 404, body: { error: 'unscripted', code: 'not_found', request_id: 'req_fake' } };
    const send = () => {
      if (response.destroyed) return;
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      response.writeHead(answer.status, {
        'content-type': typeof answer.body === 'string' ? 'text/html' : 'application/json',
        'x-request-id': `req_${path.split('/').pop()}_${log.length}`,
        ...answer.headers,
      });
      response.end(text);
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
    else send();
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  // Started up front: its start-up work would otherwise delay the timers the timing tests measure.
  svc = await startTestServer();
});
test.after.always(() => {
  fake?.closeAllConnections();
  fake?.close();
});
test.after.always(async () => {
  await svc?.close();
});

const clientFor = (options: ClientOptions = {}) =>
  createContractClient(fakeContract, new Transport(resolveOptions({ baseUrl: fakeUrl, token: undefined, ...options }))).methods;
const errorBody = (code: string, id: string): ErrorBody => ({ error: `message for ${code}`, code, request_id: id });
const thing = (id: string) => ({ id, name: 'widget' });

/** Scripts a path: the given answers in order, the last one repeated. */
function script(id: string, answers: Answer[]): string {
  const path = `/v1/things/${id}`;
  scripts.set(path, (attempt) => answers[Math.min(attempt, answers.length - 1)]!);
  return path;
}
const attempts = (id: string) => seen.get(`/v1/things/${id}`) ?? [];

async function rejection<E extends Error>(t: ExecutionContext, promise: Promise<unknown>): Promise<E> {
  const error = await t.throwsAsync(promise);
  return error as E;
}

test('on a GET, 408, 429 and every 5xx are retried, then the answer is returned', async (t) => {
  const statuses = [408, 429, 500, 502, 503, 504];
  const client = clientFor({ retry: 2 });
  await Promise.all(
    statuses.map(async (status) => {
      const id = `retry-${status}`;
      script(id, [
        { status, body: errorBody('whatever', 'x') },
        { status: 200, body: thing(id) },
      ]);
      t.deepEqual(await client.get({ params: { id } }), thing(id));
      t.is(attempts(id).length, 2, String(status));
    }),
  );
});

test('a 500 is retried only where a repeat cannot count twice: not on a plain POST, but on a route that honours its Idempotency-Key', async (t) => {
  const client = clientFor({ retry: 2 });
  script('post-500', [
    { status: 500, body: errorBody('internal_error', 'req_500') },
    { status: 201, body: thing('post-500') },
  ]);
  const error = await rejection<ServerError>(t, client.create({ params: { id: 'post-500' }, body: { name: 'n' } }));
  t.true(error instanceof ServerError);
  t.is(error.status, 500);
  t.is(attempts('post-500').length, 1, 'the first POST may have been carried out: no second one');
  script('once-500', [
    { status: 500, body: errorBody('internal_error', 'req_500') },
    { status: 201, body: thing('once-500') },
  ]);
  t.deepEqual(await client.createOnce({ params: { id: 'once-500' }, body: { name: 'n' } }), thing('once-500'));
  const [first, second] = attempts('once-500');
  t.truthy(second, 'retried');
  t.is(second!.headers['idempotency-key'], first!.headers['idempotency-key'], 'with the same key, so the server answers the first result');
  script('post-502', [
    { status: 502, body: errorBody('upstream_error', 'req_502') },
    { status: 201, body: thing('post-502') },
  ]);
  t.deepEqual(
    await client.create({ params: { id: 'post-502' }, body: { name: 'n' } }),
    thing('post-502'),
    'a 502 was not carried out: any request may go again',
  );
});

test('retries stop at the limit: limit + 1 tries, then the typed error of the last answer', async (t) => {
  script('always-503', [{ status: 503, headers: { 'retry-after': '0' }, body: errorBody('service_unavailable', 'req_last') }]);
  const error = await rejection<ServiceUnavailableError>(t, clientFor({ retry: 2 }).get({ params: { id: 'always-503' } }));
  t.true(error instanceof ServiceUnavailableError);
  t.is(attempts('always-503').length, 3);
  t.is(error.code, 'service_unavailable');
  script('no-retry-503', [{ status: 503, headers: { 'retry-after': '0' }, body: errorBody('service_unavailable', 'x') }]);
  await t.throwsAsync(clientFor({ retry: 0 }).get({ params: { id: 'no-retry-503' } }));
  t.is(attempts('no-retry-503').length, 1, 'retry: 0 means one try');
});

test('Retry-After in seconds is honoured on 429, 503 and the other retryable statuses', async (t) => {
  const client = clientFor({ retry: 1 });
  await Promise.all(
    [429, 503, 408].map(async (status) => {
      const id = `after-${status}`;
      script(id, [
        { status, headers: { 'retry-after': '1' }, body: errorBody('busy', 'x') },
        { status: 200, body: thing(id) },
      ]);
      await client.get({ params: { id } });
      const [first, second] = attempts(id);
      const waited = second!.at - first!.at;
      t.true(waited >= 950 && waited < 5000, `${status}: waited ${waited} ms`);
    }),
  );
});

test('a Retry-After longer than maxRetryAfterMs fails at once instead of waiting', async (t) => {
  script('after-long', [
    { status: 429, headers: { 'retry-after': '120' }, body: errorBody('rate_limited', 'req_long') },
    { status: 200, body: thing('after-long') },
  ]);
  const started = performance.now();
  const error = await rejection<RateLimitError>(t, clientFor({ retry: { limit: 2, maxRetryAfterMs: 1000 } }).get({ params: { id: 'after-long' } }));
  t.true(error instanceof RateLimitError);
  t.is(error.retryAfterSeconds, 120);
  t.is(attempts('after-long').length, 1, 'no retry after waiting the capped time');
  t.true(performance.now() - started < 5000);
});

test('a retried POST carries one Idempotency-Key, reused by every retry, new per logical call', async (t) => {
  script('post-retry', [{ status: 503, headers: { 'retry-after': '0' } }, { status: 502 }, { status: 201, body: thing('post-retry') }]);
  const client = clientFor({ retry: 2 });
  t.deepEqual(await client.create({ params: { id: 'post-retry' }, body: { name: 'widget' } }), thing('post-retry'));
  const keys = attempts('post-retry').map((attempt) => attempt.headers['idempotency-key']);
  t.is(keys.length, 3);
  t.regex(String(keys[0]), /^[0-9a-f-]{36}$/);
  t.is(new Set(keys).size, 1);
  t.true(attempts('post-retry').every((attempt) => attempt.method === 'POST' && attempt.headers['content-type'] === 'application/json'));
  await client.create({ params: { id: 'post-retry' }, body: { name: 'widget' } });
  t.not(attempts('post-retry')[3]!.headers['idempotency-key'], keys[0]);
  await client.create({ params: { id: 'post-retry' }, body: { name: 'widget' } }, { idempotencyKey: 'caller-key-1' });
  t.is(attempts('post-retry')[4]!.headers['idempotency-key'], 'caller-key-1');
});

test('4xx other than 408 and 429 are not retried', async (t) => {
  const client = clientFor({ retry: 3 });
  for (const status of [400, 401, 403, 404, 409, 413, 422]) {
    const id = `no-retry-${status}`;
    script(id, [
      { status, body: errorBody('some_code', 'x') },
      { status: 200, body: thing(id) },
    ]);
    await t.throwsAsync(client.create({ params: { id }, body: { name: 'n' } }));
    t.is(attempts(id).length, 1, String(status));
  }
});

test('answers map to typed errors carrying status, code, message and request id', async (t) => {
  const cases: Array<[number, abstract new (...args: never[]) => SvcError, string]> = [
    [400, BadRequestError, 'malformed_json'],
    [401, AuthenticationError, 'unauthorized'],
    [403, PermissionDeniedError, 'insufficient_scope:models:read'],
    [404, NotFoundError, 'not_found'],
    [409, ConflictError, 'conflict'],
    [413, PayloadTooLargeError, 'payload_too_large'],
    [415, UnsupportedMediaTypeError, 'unsupported_media_type'],
    [422, ValidationError, 'validation_failed'],
    [429, RateLimitError, 'rate_limited'],
    [418, ClientError, 'teapot'],
    [500, ServerError, 'internal_error'],
    [503, ServiceUnavailableError, 'service_unavailable'],
    [504, GatewayTimeoutError, 'gateway_timeout'],
  ];
  const client = clientFor({ retry: 0 });
  for (const [status, ErrorClass, code] of cases) {
    const id = `typed-${status}`;
    const body = {
      ...errorBody(code, `req_body_${status}`),
      ...(status === 422 ? { detail: [{ loc: ['body', 'name'], msg: 'Required', type: 'invalid_type' }] } : {}),
    };
    script(id, [{ status, body }]);
    const error = await rejection<SvcError>(t, client.get({ params: { id } }));
    t.true(error instanceof ErrorClass, `${status} is ${ErrorClass.name}, got ${error.constructor.name}`);
    t.true(SvcError.isInstance(error));
    t.is(error.status, status);
    t.is(error.code, code);
    t.is(error.message, `message for ${code}`);
    t.is(error.requestId, `req_body_${status}`);
    if (error instanceof ValidationError) t.deepEqual(error.issues[0]?.loc, ['body', 'name']);
  }
  // A proxy's HTML page: still typed, with the request id from the header.
  script('html-502', [{ status: 502, body: '<html>Bad gateway</html>' }]);
  const proxy = await rejection<ServerError>(t, client.get({ params: { id: 'html-502' } }));
  t.true(proxy instanceof ServerError);
  t.is(proxy.status, 502);
  t.is(proxy.code, 'http_502');
  t.is(proxy.requestId, 'req_html-502_1');
});

/** Aborts as soon as the fake has seen the request, so the abort lands in flight whatever the machine's load. */
async function abortOnceSeen(id: string, controller: AbortController): Promise<number> {
  while (attempts(id).length === 0) await sleep(10);
  await sleep(50);
  controller.abort();
  return performance.now();
}

test('an AbortSignal rejects promptly, in flight and while waiting to retry', async (t) => {
  // The fake answers after 20 s; limits below are loose because a busy CI box delays timers.
  script('slow', [{ status: 200, body: thing('slow'), delayMs: 20_000 }]);
  const inFlight = new AbortController();
  const inFlightAbortedAt = abortOnceSeen('slow', inFlight);
  const aborted = await rejection<Error>(t, clientFor().get({ params: { id: 'slow' } }, { signal: inFlight.signal }));
  t.is(aborted.name, 'AbortError');
  t.true(performance.now() - (await inFlightAbortedAt) < 2000);

  script('waiting', [
    { status: 429, headers: { 'retry-after': '20' } },
    { status: 200, body: thing('waiting') },
  ]);
  const waiting = new AbortController();
  const waitingAbortedAt = abortOnceSeen('waiting', waiting);
  await t.throwsAsync(clientFor({ retry: 2 }).get({ params: { id: 'waiting' } }, { signal: waiting.signal }));
  t.true(performance.now() - (await waitingAbortedAt) < 2000);
  t.is(attempts('waiting').length, 1);
});

test('no answer within the timeout is a TimeoutError', async (t) => {
  script('too-slow', [{ status: 200, body: thing('too-slow'), delayMs: 20_000 }]);
  const started = performance.now();
  const error = await rejection<TimeoutError>(t, clientFor({ timeout: 200, retry: 0 }).get({ params: { id: 'too-slow' } }));
  t.true(error instanceof TimeoutError);
  t.is(error.code, 'timeout');
  t.true(performance.now() - started < 5000);
});

test('path parameters may not climb out of the route with . or .. segments', async (t) => {
  const client = clientFor();
  for (const id of ['..', '.']) {
    const error = await rejection<TypeError>(t, client.get({ params: { id } }));
    t.true(error instanceof TypeError);
    t.regex(error.message, /"\." or "\.\." segments/);
  }
  t.is(seen.get('/v1/things/..'), undefined);
  script('a%2F..%2Fb', [{ status: 200, body: thing('a/../b') }]);
  t.deepEqual(await client.get({ params: { id: 'a/../b' } }), thing('a/../b'), 'a slash inside a :param is encoded, not a segment');
});

test('typed errors from a real svc server', async (t) => {
  if (!svc) throw new Error('no test server');
  const anonymous = await rejection<AuthenticationError>(t, svc.client().models.list());
  t.true(anonymous instanceof AuthenticationError);
  t.is(anonymous.status, 401);
  t.is(anonymous.code, 'unauthorized');
  t.regex(anonymous.requestId ?? '', /^req_[0-9a-f]{24}$/);
  t.is(anonymous.headers?.get('x-request-id'), anonymous.requestId);
  const wrong = await rejection<AuthenticationError>(t, svc.client({ token: 'not-the-operator-token' }).models.list());
  t.is(wrong.code, 'invalid_token');
  const missing = defineRoute({
    method: 'GET',
    path: '/v1/no-such-route',
    surface: 'base',
    auth: { kind: 'public' },
    summary: 'absent',
    responses: { 200: z.object({}) },
  });
  const notFound = await rejection<NotFoundError>(t, svc.client().transport.request(missing));
  t.true(notFound instanceof NotFoundError);
  t.is(notFound.code, 'route_not_found');
  t.true(notFound.message.includes('/v1/no-such-route'));
  t.deepEqual((await svc.operator.models.list()).engines.map((engine) => engine.id).includes('builtin'), true);
});

test('the OpenAPI document says which statuses each operation may retry, from the same rule the transport follows', async (t) => {
  const document = (await (await fetch(`${svc!.baseUrl}/openapi.json`)).json()) as {
    info: { description: string };
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  t.deepEqual(document.paths['/v1/jobs/{job_id}']!.get!['x-svc-retryable-statuses'], [408, 429, 502, 503, 504, 500], 'a GET may be repeated after a 500');
  t.deepEqual(
    document.paths['/v1/jobs']!.post!['x-svc-retryable-statuses'],
    [408, 429, 502, 503, 504, 500],
    'jobs.submit stores its first answer under the Idempotency-Key',
  );
  t.deepEqual(document.paths['/v1/rerank']!.post!['x-svc-retryable-statuses'], [408, 429, 502, 503, 504], 'a plain POST is not repeated after a 500');
  t.regex(document.info.description, /A 500 says nothing about how far the request got/);
});
