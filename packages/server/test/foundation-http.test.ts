import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { contract, walkContract } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('healthz reports liveness and database reachability, with request id and latency headers', async (t) => {
  const response = await fetch(`${svc.baseUrl}/healthz`);
  t.is(response.status, 200);
  const body = await response.json();
  t.is(body.status, 'ok');
  t.is(body.database.status, 'ok');
  t.is(body.database.kind, svc.database.kind);
  t.regex(response.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{24}$/);
  t.regex(response.headers.get('x-svc-latency-ms') ?? '', /^\d+(\.\d)?$/);
  const alias = await (await fetch(`${svc.baseUrl}/health`)).json();
  t.is(alias.status, 'ok');
  const api = await (await fetch(`${svc.apiUrl}/api/health`)).json();
  t.is(api.surface, 'api');
});

test('a caller request id is echoed; an unsafe one is replaced', async (t) => {
  const echoed = await fetch(`${svc.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-123.abc' } });
  t.is(echoed.headers.get('x-request-id'), 'trace-123.abc');
  const replaced = await fetch(`${svc.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id <script>' } });
  t.regex(replaced.headers.get('x-request-id') ?? '', /^req_/);
});

test('unknown routes answer a JSON 404 and wrong methods a JSON 405 with Allow', async (t) => {
  const missing = await fetch(`${svc.baseUrl}/no/such/route`);
  t.is(missing.status, 404);
  const body = await missing.json();
  t.is(body.code, 'route_not_found');
  t.is(body.request_id, missing.headers.get('x-request-id'));
  const wrong = await fetch(`${svc.baseUrl}/healthz`, { method: 'DELETE' });
  t.is(wrong.status, 405);
  t.deepEqual(wrong.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD']);
  t.is((await wrong.json()).code, 'method_not_allowed');
});

test('a scoped route without credentials is 401 with a resource-metadata challenge', async (t) => {
  const response = await fetch(`${svc.baseUrl}/v1/models`);
  t.is(response.status, 401);
  t.regex(
    response.headers.get('www-authenticate') ?? '',
    /^Bearer realm="svc", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"$/,
  );
  t.is((await response.json()).code, 'unauthorized');
  const wrongToken = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: 'Bearer not-the-token' } });
  t.is(wrongToken.status, 401);
  t.is((await wrongToken.json()).code, 'invalid_token');
  t.regex(wrongToken.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const basic = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
  t.is(basic.status, 401);
});

test('the operator reads models, caches and Prometheus metrics', async (t) => {
  const models = await svc.operator.models.list();
  t.true(models.engines.some((engine) => engine.id === 'builtin' && engine.kind === 'builtin'));
  await svc.operator.system.openapi();
  const caches = await svc.operator.models.cache();
  const discovery = caches.caches.find((cache) => cache.name === 'discovery-documents');
  t.truthy(discovery);
  t.true(discovery!.entries >= 1);
  const metrics = await svc.operator.system.metrics();
  t.regex(metrics, /svc_http_requests_total\{route="system\.healthz",method="GET",status="200"\} \d+/);
  t.regex(metrics, /svc_http_request_duration_seconds_bucket\{le="0\.001",route="models\.list",method="GET"\}/);
});

test('the metrics route refuses callers that are not the operator', async (t) => {
  const response = await fetch(`${svc.baseUrl}/v1/metrics`);
  t.is(response.status, 401);
});

test('openapi.json is a valid OpenAPI 3.1 document naming every contract operation', async (t) => {
  const document = await (await fetch(`${svc.baseUrl}/openapi.json`)).json();
  const validator = new Validator();
  const result = await validator.validate(document);
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
  t.is(validator.version, '3.1');
  const operationIds = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((operations) =>
    Object.values(operations).map((operation) => operation.operationId),
  );
  t.deepEqual(
    operationIds.sort(),
    walkContract(contract)
      .map(({ id }) => id)
      .sort(),
  );
});

test('discovery documents: llms.txt and agents.txt are identical, llms-full lists every operation', async (t) => {
  const llms = await (await fetch(`${svc.baseUrl}/llms.txt`)).text();
  const agents = await fetch(`${svc.baseUrl}/agents.txt`);
  t.is(agents.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.is(await agents.text(), llms);
  t.true(llms.includes(`${svc.baseUrl}/openapi.json`));
  const full = await (await fetch(`${svc.baseUrl}/llms-full.txt`)).text();
  for (const { id } of walkContract(contract)) t.true(full.includes(` ${id}: `), `llms-full.txt misses ${id}`);
  t.true(full.includes('GET /v1/models [base; scope models:read]'));
  const performance = await (await fetch(`${svc.baseUrl}/.well-known/performance.json`)).json();
  t.is(performance.protocol, 'svc.performance.v1');
  t.deepEqual(await (await fetch(`${svc.baseUrl}/.well-known/performance`)).json(), performance);
  const root = await svc.client().system.root();
  t.is(root.surfaces.base, svc.baseUrl);
  t.is(root.links.openapi, `${svc.baseUrl}/openapi.json`);
});
