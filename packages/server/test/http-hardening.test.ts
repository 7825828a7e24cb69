import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The HTTP listener's defences and headers: slow clients cut off while others are served, a
 * header size cap answered with the contract's error body, keep-alive limits, nosniff, no
 * X-Powered-By, no-store on answers that carry a secret, and CORS decided per route.
 */
// 2 s, not less: on a loaded machine an event-loop stall of a second would otherwise cut off
// ordinary requests of the other tests in this file with 408.
const HEADERS_TIMEOUT_MS = 2000;
const MAX_HEADER_BYTES = 8192;
const REQUESTS_PER_SOCKET = 3;
const APP_ORIGIN = 'https://app.example';
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({
    env: {
      SVC_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      SVC_HTTP_MAX_HEADER_BYTES: String(MAX_HEADER_BYTES),
      SVC_HTTP_MAX_REQUESTS_PER_SOCKET: String(REQUESTS_PER_SOCKET),
      SVC_CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173`,
      SVC_CATALOG_DEMO: 'on',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
});

function rawSocket(): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  const { hostname, port } = new URL(svc.baseUrl);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
  return new Promise((resolve) => socket.once('connect', () => resolve({ socket, received: () => received, closed })));
}

// Serial: alone on the machine, so "served meanwhile" measures the server, not the other tests.
test.serial('a slowloris client is cut off at the header deadline while others are served', async (t) => {
  const slow = await rawSocket();
  const started = performance.now();
  slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  // One header byte every 100 ms: never finishing, always sending.
  const trickle = setInterval(() => slow.socket.writable && slow.socket.write('X'), 100);
  t.teardown(() => clearInterval(trickle));
  const served: number[] = [];
  while (performance.now() - started < HEADERS_TIMEOUT_MS) {
    const before = performance.now();
    t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
    served.push(performance.now() - before);
    await sleep(100);
  }
  const closedAt = await Promise.race([slow.closed, sleep(HEADERS_TIMEOUT_MS * 4).then(() => -1)]);
  clearInterval(trickle);
  t.not(closedAt, -1, 'the slow client was disconnected');
  t.true(closedAt - started < HEADERS_TIMEOUT_MS * 3, `cut off after ${Math.round(closedAt - started)} ms`);
  t.regex(slow.received(), /^HTTP\/1\.1 408 /);
  const body = JSON.parse(slow.received().split('\r\n\r\n')[1]!) as { code: string; request_id: string };
  t.is(body.code, 'request_timeout');
  t.truthy(body.request_id);
  t.true(served.length >= 3 && Math.max(...served) < 500, `others served meanwhile: ${served.map(Math.round).join(', ')} ms`);
});

/**
 * A raw GET of /healthz whose header bytes as the cap counts them (the request target plus every
 * header name and value, without separators) are exactly `counted`.
 */
function requestWithHeaderBytes(counted: number): string {
  const fixed = '/healthz'.length + 'Host'.length + '127.0.0.1'.length + 'X-Filler'.length;
  return `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ${'a'.repeat(counted - fixed)}\r\n\r\n`;
}

test.serial('a slow client that finishes its headers just inside the deadline is served', async (t) => {
  const slow = await rawSocket();
  const started = performance.now();
  slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  // Header bytes trickle in for about two thirds of the deadline, then the headers end.
  while (performance.now() - started < HEADERS_TIMEOUT_MS * 0.6) {
    slow.socket.write('X-Slow: 1\r\n');
    await sleep(100);
  }
  slow.socket.write('Connection: close\r\n\r\n');
  await slow.closed;
  t.regex(slow.received(), /^HTTP\/1\.1 200 /, `answered after ${Math.round(performance.now() - started)} ms: ${slow.received().slice(0, 40)}`);
});

test('the header size cap: exactly the cap passes, one byte past it is 431 with the error body', async (t) => {
  const atCap = await rawSocket();
  atCap.socket.write(requestWithHeaderBytes(MAX_HEADER_BYTES));
  while (!atCap.received().includes('\r\n\r\n')) await sleep(10);
  atCap.socket.destroy();
  t.regex(atCap.received(), /^HTTP\/1\.1 200 /);
  const tooLarge = await rawSocket();
  tooLarge.socket.write(requestWithHeaderBytes(MAX_HEADER_BYTES + 1));
  await tooLarge.closed;
  t.regex(tooLarge.received(), /^HTTP\/1\.1 431 /);
  t.is((JSON.parse(tooLarge.received().split('\r\n\r\n')[1]!) as { code: string }).code, 'request_header_too_large');
  t.regex(tooLarge.received(), /x-content-type-options: nosniff/i);
});

test('keep-alive: a connection serves its request limit, the last answer says connection: close', async (t) => {
  const client = await rawSocket();
  for (let index = 0; index < REQUESTS_PER_SOCKET; index++) client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  for (let waited = 0; (client.received().match(/HTTP\/1\.1 /g) ?? []).length < REQUESTS_PER_SOCKET && waited < 5000; waited += 50) await sleep(50);
  const answers = client.received().split(/(?=HTTP\/1\.1 )/);
  t.is(answers.length, REQUESTS_PER_SOCKET);
  t.true(answers.every((answer) => answer.startsWith('HTTP/1.1 200 ')));
  t.regex(answers.at(-1)!, /connection: close/i);
  t.notRegex(answers[0]!, /connection: close/i);
});

test('every answer carries nosniff and no X-Powered-By; errors and discovery documents too', async (t) => {
  for (const [path, status] of [
    ['/healthz', 200],
    ['/openapi.json', 200],
    ['/no-such-route', 404],
    ['/v1/whoami', 401],
    ['/api/artifacts', 200],
  ] as const) {
    const response = await fetch(`${svc.baseUrl}${path}`);
    t.is(response.status, status, path);
    t.is(response.headers.get('x-content-type-options'), 'nosniff', path);
    t.is(response.headers.get('x-powered-by'), null, path);
  }
});

test('answers that carry a secret or answer a credential are Cache-Control: no-store', async (t) => {
  const { client, session } = await signInAgent(svc);
  const key = await client.credentials.create({ body: { name: 'cache test', scopes: ['models:read'] } }, {});
  t.truthy(key.secret);
  const created = await fetch(`${svc.baseUrl}/v1/developer/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'raw', scopes: ['models:read'] }),
  });
  t.is(created.headers.get('cache-control'), 'no-store');
  const rotated = await fetch(`${svc.baseUrl}/v1/developer/credentials/${key.credential.credential_id}/rotate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.accessToken}` },
  });
  t.is(rotated.headers.get('cache-control'), 'no-store');
  const register = await fetch(`${svc.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] }),
  });
  t.is(register.headers.get('cache-control'), 'no-store', 'a client secret');
  const download = await fetch(`${svc.apiUrl}/api/downloads/support-tickets-sample/tickets.csv`, { redirect: 'manual' });
  t.is(download.headers.get('cache-control'), 'no-store', 'a completion token');
  for (const token of [session.accessToken, (await createKey(client, ['models:read'])).secret, svc.operatorToken]) {
    const listed = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    t.is(listed.status, 200);
    t.is(listed.headers.get('cache-control'), 'no-store', 'an answer to a credential');
  }
});

test('CORS: discovery documents are readable from any origin; other routes only from SVC_CORS_ORIGINS', async (t) => {
  const stranger = 'https://stranger.example';
  for (const path of [
    '/.well-known/oauth-authorization-server',
    '/.well-known/oauth-protected-resource',
    '/openapi.json',
    '/llms.txt',
    '/api/agent-discovery',
    '/.well-known/performance.json',
  ]) {
    const response = await fetch(`${svc.baseUrl}${path}`, { headers: { origin: stranger } });
    t.is(response.status, 200, path);
    t.is(response.headers.get('access-control-allow-origin'), '*', path);
  }
  const refused = await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { origin: stranger, authorization: `Bearer ${svc.operatorToken}` } });
  t.is(refused.status, 200, 'the server answers; the browser withholds it');
  t.is(refused.headers.get('access-control-allow-origin'), null);
  t.regex(refused.headers.get('vary') ?? '', /origin/i);
  const allowed = await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { origin: APP_ORIGIN, authorization: `Bearer ${svc.operatorToken}` } });
  t.is(allowed.headers.get('access-control-allow-origin'), APP_ORIGIN);
  t.regex(allowed.headers.get('access-control-expose-headers') ?? '', /x-request-id/);
  t.is(allowed.headers.get('access-control-allow-credentials'), null, 'credentials travel in a header, never cookies');
  const preflight = (origin: string, method: string, path = '/v1/developer/credentials') =>
    fetch(`${svc.baseUrl}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
    });
  const good = await preflight(APP_ORIGIN, 'POST');
  t.is(good.status, 204);
  t.is(good.headers.get('access-control-allow-origin'), APP_ORIGIN);
  t.regex(good.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.is(good.headers.get('access-control-allow-headers'), 'authorization, content-type');
  t.truthy(good.headers.get('access-control-max-age'));
  const bad = await preflight(stranger, 'POST');
  t.is(bad.status, 403);
  t.is(((await bad.json()) as { code: string }).code, 'cors_origin_refused');
  const discovery = await preflight(stranger, 'GET', '/.well-known/oauth-authorization-server');
  t.is(discovery.status, 204);
  t.is(discovery.headers.get('access-control-allow-origin'), '*');
  t.is((await preflight(APP_ORIGIN, 'PATCH')).status, 405, 'a method the path does not answer');
});

test('a bad SVC_CORS_ORIGINS stops the server with a message naming it', async (t) => {
  const error = await t.throwsAsync(startTestServer({ env: { SVC_CORS_ORIGINS: 'https://app.example/path' } }));
  t.regex(error!.message, /SVC_CORS_ORIGINS/);
});

test('readyz answers ready with the database', async (t) => {
  const response = await fetch(`${svc.baseUrl}/readyz`);
  t.is(response.status, 200);
  const body = (await response.json()) as { status: string; database: { status: string } };
  t.is(body.status, 'ready');
  t.is(body.database.status, 'ok');
});
