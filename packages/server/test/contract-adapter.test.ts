import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { z } from 'zod';
import { defineContract, defineRoute, HTTPValidationError, queryBoolean, queryInt, redirect, sse, type Principal } from '@svc/schemas';
import { buildContractApp, createHttpMetrics, createLogger, defineHandlers, type PrincipalResolver } from '../src/index.ts';

/**
 * The generic adapter over a contract made for this test: every input part, every body
 * encoding, every response kind and every auth rule, with handlers that only echo.
 */
const UPLOAD_LIMIT = 64;
const Echo = z.object({
  id: z.string(),
  count: z.number().optional(),
  verbose: z.boolean().optional(),
  tenant: z.string().optional(),
  text: z.string(),
  aborted: z.boolean(),
});
const Who = z.object({ kind: z.string(), id: z.string(), credential: z.string() });
const publicBase = { surface: 'base', auth: { kind: 'public' } } as const;

const testContract = defineContract({
  echo: defineRoute({
    ...publicBase,
    method: 'POST',
    path: '/v1/echo/:id',
    summary: 'Echo every input part',
    params: z.object({ id: z.string().regex(/^[a-z]+$/) }),
    query: z.object({ count: queryInt(1, 10).optional(), verbose: queryBoolean().optional() }),
    headers: z.object({ 'x-tenant': z.string().min(3).optional() }),
    body: z.object({ text: z.string().max(10) }),
    responses: { 200: Echo },
  }),
  form: defineRoute({
    ...publicBase,
    method: 'POST',
    path: '/v1/form',
    summary: 'Form body',
    bodyEncoding: 'form',
    body: z.object({ name: z.string().min(1) }),
    responses: { 200: z.object({ name: z.string() }) },
  }),
  upload: defineRoute({
    ...publicBase,
    method: 'POST',
    path: '/v1/upload',
    summary: 'Bytes body under a small cap and deadline',
    bodyEncoding: 'bytes',
    body: z.instanceof(Buffer),
    bodyLimitBytes: UPLOAD_LIMIT,
    bodyTimeoutMs: 400,
    bodyMediaTypes: ['application/octet-stream', 'application/pdf'],
    responses: { 200: z.object({ bytes: z.number() }) },
  }),
  fail: defineRoute({ ...publicBase, method: 'GET', path: '/v1/fail', summary: 'Throws a plain Error', responses: { 200: z.object({}) } }),
  undeclared: defineRoute({
    ...publicBase,
    method: 'GET',
    path: '/v1/undeclared',
    summary: 'Answers a status it does not declare',
    responses: { 200: z.object({}) },
  }),
  badShape: defineRoute({
    ...publicBase,
    method: 'GET',
    path: '/v1/bad-shape',
    summary: 'Answers a body breaking its schema',
    responses: { 200: z.object({ count: z.number() }) },
  }),
  events: defineRoute({
    ...publicBase,
    method: 'GET',
    path: '/v1/events',
    summary: 'Endless event stream',
    responses: { 200: sse(z.object({ n: z.number() })) },
  }),
  hold: defineRoute({
    ...publicBase,
    method: 'GET',
    path: '/v1/hold',
    summary: 'Waits for the client or a short while',
    query: z.object({ ms: queryInt(0, 5000) }),
    responses: { 200: z.object({ aborted: z.boolean() }) },
  }),
  late: defineRoute({
    ...publicBase,
    method: 'GET',
    path: '/v1/late',
    summary: 'Works a while, then looks at its signal',
    responses: { 200: z.object({ aborted: z.boolean() }) },
  }),
  go: defineRoute({ ...publicBase, method: 'GET', path: '/v1/go', summary: 'Redirect', responses: { 302: redirect() } }),
  scoped: defineRoute({
    surface: 'base',
    method: 'GET',
    path: '/v1/scoped',
    summary: 'Scope models:read',
    auth: { kind: 'scoped', scopes: ['models:read'] },
    responses: { 200: Who },
  }),
  agentOnly: defineRoute({
    surface: 'base',
    method: 'GET',
    path: '/v1/agent-only',
    summary: 'Agents only',
    auth: { kind: 'scoped', scopes: ['models:read'], principals: ['agent'] },
    responses: { 200: Who },
  }),
  bearer: defineRoute({
    surface: 'base',
    method: 'GET',
    path: '/v1/bearer',
    summary: 'Bearer tokens only',
    auth: { kind: 'bearer', principals: ['agent'] },
    responses: { 200: Who },
  }),
  apiEcho: defineRoute({
    surface: 'api',
    auth: { kind: 'scoped', scopes: ['requests:read'] },
    method: 'POST',
    path: '/api/echo',
    summary: 'Api surface echo',
    body: z.object({ text: z.string() }),
    responses: { 200: z.object({ text: z.string() }) },
  }),
});

let handlerSawAbort: () => void = () => {};
const handlerSawAbortPromise = new Promise<void>((resolve) => (handlerSawAbort = resolve));
let longHoldStarted: () => void = () => {};
const longHoldStartedPromise = new Promise<void>((resolve) => (longHoldStarted = resolve));
let lateStarted: () => void = () => {};
const lateStartedPromise = new Promise<void>((resolve) => (lateStarted = resolve));
let lateSaw: (aborted: boolean) => void = () => {};
const lateSawPromise = new Promise<boolean>((resolve) => (lateSaw = resolve));
let producerStopped: () => void = () => {};
const producerStoppedPromise = new Promise<void>((resolve) => (producerStopped = resolve));
const who = (principal: Principal) => ({ status: 200 as const, body: { kind: principal.kind, id: principal.id, credential: principal.credential } });

const handlers = defineHandlers(testContract, {
  async echo({ params, query, headers, body }, request) {
    // A tick later the request signal must still be quiet: reading the body is not a disconnect.
    await sleep(20);
    return {
      status: 200,
      body: { id: params.id, count: query.count, verbose: query.verbose, tenant: headers['x-tenant'], text: body.text, aborted: request.signal.aborted },
    };
  },
  async form({ body }) {
    return { status: 200, body: { name: body.name } };
  },
  async upload({ body }) {
    return { status: 200, body: { bytes: body.length } };
  },
  async fail() {
    throw new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2');
  },
  async undeclared() {
    // Deliberately outside the contract: the adapter must refuse it at run time.
    return { status: 201, body: {} } as never;
  },
  async badShape() {
    return { status: 200, body: { count: 'many' } } as never;
  },
  async events() {
    async function* ticks() {
      try {
        for (let n = 0; ; n++) {
          yield { event: 'tick-sent', data: { n } };
          await sleep(20);
        }
      } finally {
        producerStopped();
      }
    }
    return { status: 200, body: ticks() };
  },
  async hold({ query }, request) {
    if (query.ms >= 1000) longHoldStarted();
    await sleep(query.ms, undefined, { signal: request.signal }).catch(() => handlerSawAbort());
    return { status: 200, body: { aborted: request.signal.aborted } };
  },
  async late(_input, request) {
    lateStarted();
    await sleep(300);
    // First look at the signal only now, after the client has gone.
    const { signal } = request;
    const aborted = signal.aborted || (await Promise.race([once(signal, 'abort').then(() => true), sleep(3000).then(() => false)]));
    lateSaw(aborted);
    return { status: 200, body: { aborted } };
  },
  async go() {
    return { status: 302, headers: { location: 'https://example.com/target' } };
  },
  async scoped(_input, request) {
    return who(request.principal);
  },
  async agentOnly(_input, request) {
    return who(request.principal);
  },
  async bearer(_input, request) {
    return who(request.principal);
  },
  async apiEcho({ body }) {
    return { status: 200, body: { text: body.text } };
  },
});

/** A resolver standing for the identity feature: fixed tokens for each kind of caller. */
const principals: Record<string, Principal> = {
  'agent-token': { kind: 'agent', id: 'agent-1', scopes: ['models:read', 'requests:read'], credential: 'oauth_access_token' },
  'agent-key': { kind: 'agent', id: 'agent-1', scopes: ['models:read'], credential: 'developer_key', developerKeyId: 'key_1' },
  'weak-token': { kind: 'agent', id: 'agent-2', scopes: ['jobs:read'], credential: 'oauth_access_token' },
  'demo-token': { kind: 'demo', id: 'demo', scopes: ['models:read'], credential: 'demo_token' },
};
const testResolver: PrincipalResolver = { name: 'test', resolve: async (token) => principals[token] ?? null };

async function serve(openAccess: boolean): Promise<{ server: Server; url: string }> {
  const app = buildContractApp({
    contract: testContract,
    handlers,
    surfaces: ['base', 'api'],
    resolvers: [testResolver],
    openAccess,
    validateResponses: true,
    trustProxy: false,
    publicUrls: () => ({ baseUrl: 'http://svc.test', apiUrl: 'http://svc.test' }),
    log: createLogger('silent'),
    metrics: createHttpMetrics(),
    // The deadline of a JSON body (the default is 30 s): short, so a test can wait it out.
    bodyTimeoutMs: 1000,
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let closed: { server: Server; url: string };
let open: { server: Server; url: string };
test.before(async () => {
  [closed, open] = await Promise.all([serve(false), serve(true)]);
});
test.after.always(() => {
  for (const { server } of [closed, open]) server?.closeAllConnections();
  for (const { server } of [closed, open]) server?.close();
});

const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${closed.url}${path}`, { method: 'POST', headers, body });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  elapsedMs: number;
}

/**
 * A request whose body is written piece by piece (chunked unless a Content-Length is given),
 * so the cap and the deadline can be hit while streaming. The answer may come before the body
 * is all written; writes after the server hung up are ignored.
 */
function rawUpload(options: { path?: string; headers?: Record<string, string>; chunks: Buffer[]; pauseMs?: number; end?: boolean }): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(
      `${closed.url}${options.path ?? '/v1/upload'}`,
      { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...options.headers } },
      (response) => {
        answered = true;
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body, elapsedMs: performance.now() - started }));
      },
    );
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    request.flushHeaders();
    void (async () => {
      for (const chunk of options.chunks) {
        if (answered || request.destroyed) return;
        request.write(chunk);
        await sleep(options.pauseMs ?? 5);
      }
      if (options.end !== false && !answered) request.end();
    })();
  });
}

function assertErrorBody(
  t: import('ava').ExecutionContext,
  response: { headers: { get(name: string): string | null } },
  body: Record<string, unknown>,
  code: string,
): void {
  t.is(body.code, code);
  t.is(typeof body.error, 'string');
  t.is(body.request_id, response.headers.get('x-request-id'));
}

test('valid input reaches the handler parsed: params, queryInt, queryBoolean, header, JSON body', async (t) => {
  const response = await post('/v1/echo/abc?count=3&verbose=1', JSON.stringify({ text: 'hi' }), { 'content-type': 'application/json', 'x-tenant': 'acme' });
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { id: 'abc', count: 3, verbose: true, tenant: 'acme', text: 'hi', aborted: false });
  const form = await post('/v1/form', 'name=Ada+Lovelace', { 'content-type': 'application/x-www-form-urlencoded' });
  t.deepEqual(await form.json(), { name: 'Ada Lovelace' });
});

test('bad params, query, header and body answer 422 HTTPValidationError with located issues', async (t) => {
  const cases: Array<{ path: string; headers?: Record<string, string>; body: string; loc: Array<string | number> }> = [
    { path: '/v1/echo/ABC', body: '{"text":"hi"}', loc: ['path', 'id'] },
    { path: '/v1/echo/abc?count=abc', body: '{"text":"hi"}', loc: ['query', 'count'] },
    { path: '/v1/echo/abc?count=11', body: '{"text":"hi"}', loc: ['query', 'count'] },
    { path: '/v1/echo/abc?verbose=yes', body: '{"text":"hi"}', loc: ['query', 'verbose'] },
    { path: '/v1/echo/abc', headers: { 'x-tenant': 'ab' }, body: '{"text":"hi"}', loc: ['header', 'x-tenant'] },
    { path: '/v1/echo/abc', body: '{"text":"far too long"}', loc: ['body', 'text'] },
    { path: '/v1/echo/abc', body: '{}', loc: ['body', 'text'] },
  ];
  for (const { path, headers, body, loc } of cases) {
    const response = await post(path, body, { 'content-type': 'application/json', ...headers });
    t.is(response.status, 422, path);
    const answer = await response.json();
    const parsed = HTTPValidationError.safeParse(answer);
    t.true(parsed.success, JSON.stringify(answer));
    assertErrorBody(t, response, answer, 'validation_failed');
    t.deepEqual(answer.detail[0].loc, loc, path);
    t.is(typeof answer.detail[0].msg, 'string');
    t.is(typeof answer.detail[0].type, 'string');
  }
  const formResponse = await post('/v1/form', 'name=', { 'content-type': 'application/x-www-form-urlencoded' });
  t.is(formResponse.status, 422);
  t.deepEqual((await formResponse.json()).detail[0].loc, ['body', 'name']);
});

test('malformed JSON is 400 malformed_json; a wrong content type is 415; multipart on a bytes route is 415', async (t) => {
  const malformed = await post('/v1/echo/abc', '{"text":', { 'content-type': 'application/json' });
  t.is(malformed.status, 400);
  assertErrorBody(t, malformed, await malformed.json(), 'malformed_json');
  const wrongType = await post('/v1/echo/abc', '{"text":"hi"}', { 'content-type': 'text/plain' });
  t.is(wrongType.status, 415);
  assertErrorBody(t, wrongType, await wrongType.json(), 'unsupported_media_type');
  const multipart = new FormData();
  multipart.set('file', new Blob([Buffer.from('%PDF-1.7')]), 'a.pdf');
  const multipartAnswer = await fetch(`${closed.url}/v1/upload`, { method: 'POST', body: multipart });
  t.is(multipartAnswer.status, 415);
  assertErrorBody(t, multipartAnswer, await multipartAnswer.json(), 'unsupported_media_type');
  const pdf = await post('/v1/upload', '%PDF-1.7', { 'content-type': 'application/pdf' });
  t.deepEqual(await pdf.json(), { bytes: 8 });
});

test('the byte cap by Content-Length: the limit passes, one byte past is 413 before the body is read', async (t) => {
  const atLimit = await post('/v1/upload', 'a'.repeat(UPLOAD_LIMIT), { 'content-type': 'application/octet-stream' });
  t.is(atLimit.status, 200);
  t.deepEqual(await atLimit.json(), { bytes: UPLOAD_LIMIT });
  // Headers only: the answer must come without a single body byte sent.
  const declared = await rawUpload({ headers: { 'content-length': String(UPLOAD_LIMIT + 1) }, chunks: [], end: false });
  t.is(declared.status, 413);
  t.is(JSON.parse(declared.body).code, 'payload_too_large');
});

test('the byte cap while streaming chunked: the limit passes, one byte past is 413', async (t) => {
  const half = Buffer.alloc(UPLOAD_LIMIT / 2, 1);
  const atLimit = await rawUpload({ chunks: [half, half] });
  t.is(atLimit.headers['content-type'], 'application/json; charset=utf-8');
  t.is(atLimit.status, 200);
  t.deepEqual(JSON.parse(atLimit.body), { bytes: UPLOAD_LIMIT });
  const past = await rawUpload({ chunks: [half, half, Buffer.alloc(1, 1)] });
  t.is(past.status, 413);
  t.is(JSON.parse(past.body).code, 'payload_too_large');
});

test('a body slower than the route deadline is 408 request_timeout', async (t) => {
  const slow = await rawUpload({ headers: { 'content-length': '10' }, chunks: [Buffer.alloc(5)], end: false });
  t.is(slow.status, 408);
  t.true(slow.elapsedMs >= 350 && slow.elapsedMs < 8000, `answered after ${slow.elapsedMs} ms`);
  t.is(JSON.parse(slow.body).code, 'request_timeout');
  t.is(slow.headers.connection, 'close', 'the half-read connection is not reused');
});

test('a small JSON body arriving in pieces is read whole', async (t) => {
  const body = Buffer.from('{"text":"hi"}');
  const answer = await rawUpload({
    path: '/v1/echo/abc',
    headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    chunks: [body.subarray(0, 5), body.subarray(5, 9), body.subarray(9)],
    pauseMs: 30,
  });
  t.is(answer.status, 200, answer.body);
  t.like(JSON.parse(answer.body), { id: 'abc', text: 'hi' });
});

test('a small JSON body that stops short of its Content-Length is 408 request_timeout at the deadline', async (t) => {
  const slow = await rawUpload({
    path: '/v1/echo/abc',
    headers: { 'content-type': 'application/json', 'content-length': '20' },
    chunks: [Buffer.from('{"text":')],
    end: false,
  });
  t.is(slow.status, 408);
  t.true(slow.elapsedMs >= 900 && slow.elapsedMs < 15_000, `answered after ${slow.elapsedMs} ms`);
  t.is(JSON.parse(slow.body).code, 'request_timeout');
  t.is(slow.headers.connection, 'close', 'the half-read connection is not reused');
});

test('a handler throwing a plain Error is 500 internal_error with nothing internal in the body', async (t) => {
  const response = await fetch(`${closed.url}/v1/fail`);
  t.is(response.status, 500);
  const text = await response.text();
  const body = JSON.parse(text);
  assertErrorBody(t, response, body, 'internal_error');
  t.deepEqual(Object.keys(body).sort(), ['code', 'error', 'request_id']);
  for (const leak of ['ECONNREFUSED', 'hunter2', '10.0.0.7', 'at ', '.ts']) t.false(text.includes(leak), leak);
});

test('an undeclared status or a body breaking its schema is 500, never the broken answer', async (t) => {
  for (const path of ['/v1/undeclared', '/v1/bad-shape']) {
    const response = await fetch(`${closed.url}${path}`);
    t.is(response.status, 500, path);
    const text = await response.text();
    assertErrorBody(t, response, JSON.parse(text), 'internal_error');
    t.false(text.includes('contract'), 'no internal message leaks');
  }
});

test('an SSE route streams events and stops its producer when the client goes away', async (t) => {
  const controller = new AbortController();
  const response = await fetch(`${closed.url}/v1/events`, { signal: controller.signal });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let received = '';
  while (!received.includes('"n":2')) received += (await reader.read()).value ?? '';
  t.true(received.startsWith('event: tick-sent\ndata: {"n":0}\n\n'));
  controller.abort();
  const stopped = await Promise.race([producerStoppedPromise.then(() => true), sleep(5000).then(() => false)]);
  t.true(stopped, 'the producer was returned after the disconnect');
});

test('the handler signal stays quiet for a patient client and aborts when the client goes away', async (t) => {
  t.deepEqual(await (await fetch(`${closed.url}/v1/hold?ms=100`)).json(), { aborted: false });
  const controller = new AbortController();
  const pending = fetch(`${closed.url}/v1/hold?ms=5000`, { signal: controller.signal });
  // The client leaves once the handler holds (not after a fixed pause, which a loaded machine may not have reached the handler in).
  await longHoldStartedPromise;
  controller.abort();
  await t.throwsAsync(pending);
  const aborted = await Promise.race([handlerSawAbortPromise.then(() => true), sleep(4000).then(() => false)]);
  t.true(aborted, 'request.signal aborted after the disconnect');
});

test('the handler signal is aborted even when first read after the client went away', async (t) => {
  const controller = new AbortController();
  const pending = fetch(`${closed.url}/v1/late`, { signal: controller.signal });
  await lateStartedPromise;
  controller.abort();
  await t.throwsAsync(pending);
  t.true(await lateSawPromise);
});

test('a redirect route answers 302 with Location', async (t) => {
  const response = await fetch(`${closed.url}/v1/go`, { redirect: 'manual' });
  t.is(response.status, 302);
  t.is(response.headers.get('location'), 'https://example.com/target');
});

test('scoped and bearer rules with a custom principal resolver', async (t) => {
  const get = async (path: string, headers: Record<string, string> = {}, base = closed.url) => {
    const response = await fetch(`${base}${path}`, { headers });
    return { response, body: await response.json() };
  };
  const ok = await get('/v1/scoped', bearer('agent-token'));
  t.deepEqual(ok.body, { kind: 'agent', id: 'agent-1', credential: 'oauth_access_token' });
  t.is((await get('/v1/scoped', bearer('agent-key'))).body.credential, 'developer_key', 'developer keys are fine on scoped routes');

  const keyOnBearer = await get('/v1/bearer', bearer('agent-key'));
  t.is(keyOnBearer.response.status, 403);
  assertErrorBody(t, keyOnBearer.response, keyOnBearer.body, 'developer_key_not_accepted');
  t.is((await get('/v1/bearer', bearer('agent-token'))).body.kind, 'agent');

  const weak = await get('/v1/scoped', bearer('weak-token'));
  t.is(weak.response.status, 403);
  assertErrorBody(t, weak.response, weak.body, 'insufficient_scope:models:read');
  t.regex(weak.response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
  t.regex(weak.response.headers.get('www-authenticate') ?? '', /scope="models:read"/);

  const demo = await get('/v1/agent-only', bearer('demo-token'));
  t.is(demo.response.status, 403);
  assertErrorBody(t, demo.response, demo.body, 'principal_not_allowed');
  t.is((await get('/v1/bearer', bearer('demo-token'))).body.code, 'principal_not_allowed');

  const anonymous = await get('/v1/scoped');
  t.is(anonymous.response.status, 401);
  t.regex(
    anonymous.response.headers.get('www-authenticate') ?? '',
    /^Bearer realm="svc", resource_metadata="http:\/\/svc\.test\/\.well-known\/oauth-protected-resource"$/,
  );
  t.is((await get('/v1/scoped', bearer('nobody'))).body.code, 'invalid_token');

  // Open access: no credential acts as the open principal on scoped routes, never on bearer ones.
  t.deepEqual((await get('/v1/scoped', {}, open.url)).body, { kind: 'open', id: 'open', credential: 'none' });
  t.is((await get('/v1/agent-only', {}, open.url)).body.code, 'principal_not_allowed');
  t.is((await get('/v1/bearer', {}, open.url)).response.status, 401);
  t.is((await get('/v1/scoped', bearer('weak-token'), open.url)).response.status, 403, 'a credential that is sent is still checked');
});

test('api-surface routes answer errors in the same { error, code, request_id } shape', async (t) => {
  const cases: Array<{ headers: Record<string, string>; body: string; status: number; code: string }> = [
    { headers: {}, body: '{"text":"x"}', status: 401, code: 'unauthorized' },
    { headers: bearer('agent-key'), body: '{"text":"x"}', status: 403, code: 'insufficient_scope:requests:read' },
    { headers: bearer('agent-token'), body: '{"text":1}', status: 422, code: 'validation_failed' },
    { headers: bearer('agent-token'), body: '{"text"', status: 400, code: 'malformed_json' },
  ];
  for (const { headers, body, status, code } of cases) {
    const response = await post('/api/echo', body, { 'content-type': 'application/json', ...headers });
    t.is(response.status, status, code);
    const answer = await response.json();
    assertErrorBody(t, response, answer, code);
  }
  const missing = await fetch(`${closed.url}/api/nothing-here`);
  t.is(missing.status, 404);
  assertErrorBody(t, missing, await missing.json(), 'route_not_found');
  const ok = await post('/api/echo', '{"text":"x"}', { 'content-type': 'application/json', ...bearer('agent-token') });
  t.deepEqual(await ok.json(), { text: 'x' });
});
