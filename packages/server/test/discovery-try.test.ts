import test from 'ava';
import { TRY_CALLS_PER_MINUTE } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_TRUST_PROXY: 'true' } });
});
test.after.always(async () => {
  await svc?.close();
});

const tryFrom = (address: string, query = '') => fetch(`${svc.baseUrl}/v1/try${query}`, { headers: { 'x-forwarded-for': address } });

test('GET /v1/try runs the fixed built-in rerank with no credential, with timings and what to do next', async (t) => {
  const response = await tryFrom('203.0.113.10');
  t.is(response.status, 200);
  const body = await response.json();
  t.is(body.service, 'svc');
  t.is(body.operation.path, '/v1/rerank');
  t.is(body.operation.response.model, 'svc-bm25');
  t.is(body.operation.response.results.length, body.operation.request.documents.length);
  t.regex(body.operation.response.results[0].document.text, /verified|digest/i, 'the best document is about verified downloads');
  t.true(body.timings_ms.total >= body.timings_ms.engine);
  t.is(body.credential.register, `${svc.baseUrl}/oauth/register`);
  t.deepEqual(body.next[0], { method: 'GET', url: `${svc.baseUrl}/v1/try`, why: body.next[0].why });
  const again = await (await tryFrom('203.0.113.10')).json();
  t.deepEqual(again.operation, body.operation, 'the same fixed work every time');
  const viaClient = await svc.client().discovery.try();
  t.deepEqual(viaClient.operation, body.operation, 'the client reads the same answer');
});

test('query parameters are refused: no caller-controlled compute', async (t) => {
  const response = await tryFrom('203.0.113.11', '?query=mine');
  t.is(response.status, 422);
  t.is((await response.json()).code, 'validation_failed');
});

test(`at most ${TRY_CALLS_PER_MINUTE} calls a minute per address: the limit passes, one more is 429`, async (t) => {
  const address = '203.0.113.12';
  // The allowance is a fixed window of one clock minute: calls that straddle its end would count
  // in two windows, so start early in one (a loaded machine can take seconds for the 31 calls).
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
  const statuses = [];
  for (let call = 0; call < TRY_CALLS_PER_MINUTE; call++) statuses.push((await tryFrom(address)).status);
  t.deepEqual(new Set(statuses), new Set([200]));
  const over = await tryFrom(address);
  t.is(over.status, 429);
  t.truthy(over.headers.get('retry-after'));
  t.is((await tryFrom('203.0.113.13')).status, 200, 'another address has its own allowance');
});

test('behind a proxy the address is the one the proxy appended: a caller cannot escape its allowance by sending its own X-Forwarded-For', async (t) => {
  const address = '203.0.113.14';
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
  for (let call = 0; call < TRY_CALLS_PER_MINUTE; call++) await tryFrom(address);
  t.is((await tryFrom(address)).status, 429);
  // nginx's `$proxy_add_x_forwarded_for` appends the real address to whatever the caller sent.
  t.is((await tryFrom(`198.51.100.7, ${address}`)).status, 429, 'a spoofed first entry is not the address');
  t.is((await tryFrom(`${address}, 198.51.100.8`)).status, 200, 'the last entry is');
});
