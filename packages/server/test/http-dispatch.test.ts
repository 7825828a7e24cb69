import test from 'ava';
import { blackboardContract, developerKeysContract, inferenceContract, jobsContract, modelsContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const rerank = { query: 'postgres replication', documents: ['a cake recipe', 'streaming replication in postgres', 'postgres logical replication'] };

async function overHttp(url: string, init: RequestInit) {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json(), headers: response.headers };
}

test('a dispatched route answers what the same route answers over HTTP', async (t) => {
  const authorization = `Bearer ${svc.operatorToken}`;
  const dispatched = await svc.server.deps.dispatch.call(inferenceContract.rerank, { body: rerank }, { authorization, ip: '127.0.0.1' });
  const rest = await overHttp(urlFor(svc.server.urls(), inferenceContract.rerank), {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(rerank),
  });
  t.is(dispatched.status, 200);
  t.deepEqual(dispatched.json, rest.body);
});

test('auth, validation and path params are the REST ones', async (t) => {
  const { dispatch } = svc.server.deps;
  const anonymous = await dispatch.call(inferenceContract.rerank, { body: rerank }, { ip: '127.0.0.1' });
  t.is(anonymous.status, 401);
  t.regex(String(anonymous.headers['www-authenticate']), /resource_metadata="/);
  t.is((anonymous.json as { code: string }).code, 'unauthorized');

  const invalid = await dispatch.call(
    inferenceContract.rerank,
    { body: { query: '', documents: [] } },
    { authorization: `Bearer ${svc.operatorToken}`, ip: '127.0.0.1' },
  );
  const invalidRest = await overHttp(urlFor(svc.server.urls(), inferenceContract.rerank), {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '', documents: [] }),
  });
  t.is(invalid.status, 422);
  const { request_id: _a, ...dispatchedError } = invalid.json as Record<string, unknown>;
  const { request_id: _b, ...restError } = invalidRest.body as Record<string, unknown>;
  t.deepEqual(dispatchedError, restError);

  const missing = await dispatch.call(
    jobsContract.get,
    { params: { job_id: 'job_0000000000000000none' } },
    { authorization: `Bearer ${svc.operatorToken}`, ip: '127.0.0.1' },
  );
  t.is(missing.status, 404);
});

test('the caller address is the one per-IP rules see, and query parameters travel as the client writes them', async (t) => {
  const { dispatch } = svc.server.deps;
  const key = `dispatch-${Date.now()}`;
  const put = await dispatch.call(blackboardContract.put, { body: { key, value: { text: 'from dispatch' } } }, { ip: '203.0.113.7' });
  t.is(put.status, 201, put.text);
  const got = await dispatch.call(blackboardContract.get, { query: { key, limit: 5 } }, { ip: '203.0.113.7' });
  t.is(got.status, 200, got.text);
  t.deepEqual(
    (got.json as { items: Array<{ item: { text: string } }> }).items.map((entry) => entry.item.text),
    ['from dispatch'],
  );
});

test('a JSON route served in process answers the HTTP status, headers and body, refusals included', async (t) => {
  const { dispatch } = svc.server.deps;
  const authorization = `Bearer ${svc.operatorToken}`;
  const cases: Array<{ label: string; body: unknown; authorization?: string }> = [
    { label: 'an answer', body: rerank, authorization },
    { label: 'no credential', body: rerank },
    { label: 'a credential that is not valid', body: rerank, authorization: 'Bearer not-a-token' },
    { label: 'a schema refusal', body: { query: '', documents: [] }, authorization },
    { label: 'a NUL character', body: { query: 'post\u0000gres', documents: ['a'] }, authorization },
    { label: 'a lone surrogate', body: { query: 'post\ud800gres', documents: ['a'] }, authorization },
    { label: 'a body over the limit', body: { query: 'q', documents: ['x'.repeat(9 * 1024 * 1024)] }, authorization },
  ];
  for (const { label, body, authorization: credential } of cases) {
    const dispatched = await dispatch.call(inferenceContract.rerank, { body }, { ip: '127.0.0.1', ...(credential ? { authorization: credential } : {}) });
    const response = await fetch(urlFor(svc.server.urls(), inferenceContract.rerank), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(credential ? { authorization: credential } : {}) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    t.is(dispatched.status, response.status, label);
    for (const name of ['content-type', 'cache-control', 'www-authenticate', 'x-content-type-options'])
      t.is(dispatched.headers[name] === undefined ? null : String(dispatched.headers[name]), response.headers.get(name), `${label}: ${name}`);
    t.truthy(dispatched.headers['x-request-id'], `${label}: x-request-id`);
    const withoutId = (value: unknown) => {
      const { request_id: _id, ...rest } = value as Record<string, unknown>;
      return rest;
    };
    t.deepEqual(withoutId(dispatched.json), withoutId(JSON.parse(text)), label);
  }
});

test("a key's limits hold for a route served in process: the requests are counted, a lease is given back when the answer is taken", async (t) => {
  const { dispatch } = svc.server.deps;
  const agent = await signInAgent(svc);
  const created = await agent.client.credentials.create({
    body: { name: 'dispatch-limits', scopes: ['models:read'], limits: { requests_per_minute: 2, concurrent_requests: 1 } },
  });
  const caller = { authorization: `Bearer ${created.secret}`, ip: '127.0.0.1' };
  // The three calls fall in one minute's window.
  if (Date.now() % 60_000 > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
  // One request in flight at a time: each call below starts after the one before was answered.
  const first = await dispatch.call(modelsContract.list, {}, caller);
  const second = await dispatch.call(modelsContract.list, {}, caller);
  t.is(first.status, 200, first.text);
  t.is(second.status, 200, `${second.text}: the first call's lease was given back`);
  t.is(second.headers['x-ratelimit-limit-requests'], '2');
  const third = await dispatch.call(modelsContract.list, {}, caller);
  t.is(third.status, 429, third.text);
  t.is((third.json as { code: string }).code, 'key_limit_exceeded:requests_per_minute');
  t.is(third.headers['x-ratelimit-remaining-requests'], '0');
});

test("a principal carried from the outer request is taken instead of resolving the credential again, and the route's requirement is checked on it", async (t) => {
  const { dispatch } = svc.server.deps;
  const agent = await signInAgent(svc);
  const key = await agent.client.credentials.create({ body: { name: 'dispatch-carried', scopes: ['models:read'] } });
  const authorization = `Bearer ${key.secret}`;
  const resolved = await dispatch.call(modelsContract.list, {}, { authorization, ip: '127.0.0.1' });
  t.is(resolved.status, 200, resolved.text);
  // The outer request resolved this credential to a developer key's principal: the route takes it
  // (an unknown token beside it would otherwise be refused), and its requirement still holds.
  const principal = {
    kind: 'agent',
    id: agent.id,
    scopes: ['models:read'],
    credential: 'developer_key',
    developerKeyId: key.credential.credential_id,
  } as const;
  const unknownToken = 'Bearer svc_not_a_known_token';
  const carried = await dispatch.call(modelsContract.list, {}, { authorization: unknownToken, principal, ip: '127.0.0.1' });
  t.is(carried.status, 200, carried.text);
  const notCarried = await dispatch.call(modelsContract.list, {}, { authorization: unknownToken, ip: '127.0.0.1' });
  t.is(notCarried.status, 401, notCarried.text);
  // A route that takes no developer key refuses the carried one as REST refuses the key itself.
  const refused = await dispatch.call(developerKeysContract.list, {}, { authorization: unknownToken, principal, ip: '127.0.0.1' });
  const restRefused = await overHttp(urlFor(svc.server.urls(), developerKeysContract.list), { headers: { authorization } });
  t.is(restRefused.status, 403);
  t.is(refused.status, restRefused.status, refused.text);
  t.is((refused.json as { code: string }).code, (restRefused.body as { code: string }).code);
  t.is((refused.json as { code: string }).code, 'developer_key_not_accepted');
});
