import test from 'ava';
import { contract, scopes as allScopes, walkContract, type RouteDefinition, type Scope } from '@svc/schemas';
import { fillPath } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';

/**
 * Walks the whole contract, so routes other features add are covered without editing this file:
 * every scoped route refuses a developer key lacking one of its scopes (403 naming it) and lets a
 * key holding them past auth; every bearer-only route refuses a developer key; every owner-scoped
 * resource answers 404 to another principal.
 */
let svc: TestServer;
test.before(async () => {
  // The owner walk signs in a new agent for each owner-scoped resource (over 20 of them), and the
  // other tests more, all from this address within a minute: past the default of 20 client
  // registrations a minute per address, which identity-revocation.test.ts checks at its edge.
  svc = await startTestServer({ env: { SVC_OAUTH_REGISTER_RATE_PER_MINUTE: '1000' } });
});
test.after.always(async () => {
  await svc?.close();
});

const routes = walkContract(contract);

function call(route: RouteDefinition, bearer: string, params: Record<string, string> = {}, body?: unknown): Promise<Response> {
  const filled = Object.fromEntries([...route.path.matchAll(/[:*]([A-Za-z0-9_]+)/g)].map((match) => [match[1]!, params[match[1]!] ?? 'svc-walk-probe']));
  const root = route.surface === 'api' ? svc.apiUrl : svc.baseUrl;
  const json = body === undefined ? {} : { body: JSON.stringify(body), headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' } };
  return fetch(`${root}${fillPath(route.path, filled)}`, { method: route.method, headers: { authorization: `Bearer ${bearer}` }, redirect: 'manual', ...json });
}

const servesAgents = (route: RouteDefinition) =>
  route.auth.kind !== 'public' && (!('principals' in route.auth) || !route.auth.principals || route.auth.principals.includes('agent'));

test('every scoped route answers 403 to a developer key lacking one of its scopes, naming it', async (t) => {
  const { client: agent } = await signInAgent(svc);
  // One key per scope it lacks, all else held: the adapter must refuse on exactly that scope.
  const lacking = new Map<Scope, string>();
  for (const scope of allScopes)
    lacking.set(
      scope,
      (
        await createKey(
          agent,
          allScopes.filter((other) => other !== scope),
          `lacks ${scope}`,
        )
      ).secret,
    );
  const scoped = routes.filter(({ route }) => route.auth.kind === 'scoped' && route.auth.scopes.length > 0);
  t.true(scoped.length > 0);
  for (const { id, route } of scoped) {
    if (route.auth.kind !== 'scoped') continue;
    for (const scope of route.auth.scopes) {
      const response = await call(route, lacking.get(scope)!);
      t.is(response.status, 403, `${id} with a key lacking ${scope}`);
      const body = (await response.json()) as { code: string };
      if (servesAgents(route)) t.is(body.code, `insufficient_scope:${scope}`, id);
    }
  }
});

test('a developer key holding the scopes gets past auth on every scoped GET route', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const full = (await createKey(agent, [...allScopes], 'all scopes')).secret;
  for (const { id, route } of routes.filter(({ route }) => route.auth.kind === 'scoped' && route.method === 'GET' && servesAgents(route))) {
    const response = await call(route, full);
    t.false([401, 403].includes(response.status), `${id} answered ${response.status}`);
    await response.body?.cancel();
  }
});

test('every bearer-only route refuses a developer key, even one with every scope', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const full = (await createKey(agent, [...allScopes], 'all scopes')).secret;
  const bearerOnly = routes.filter(({ route }) => route.auth.kind === 'bearer');
  t.true(bearerOnly.some(({ id }) => id === 'developerKeys.create'));
  for (const { id, route } of bearerOnly) {
    const response = await call(route, full);
    t.is(response.status, 403, id);
    t.is(((await response.json()) as { code: string }).code, 'developer_key_not_accepted', id);
  }
});

/**
 * Owner-scoped resources: for each, how principal A makes one (answering its path params).
 * A route that takes a path parameter and serves agents must be listed here or in
 * NOT_OWNER_SCOPED; the guard test below fails with instructions when a new one is not.
 */
/** `ownerStatus`: what the owner's call answers when not a success (the resource was found, the action not allowed in its state). */
type Maker = (svc: TestServer) => Promise<{ owner: string; params: Record<string, string>; ownerStatus?: number; body?: unknown }>;
const OWNED_RESOURCES: Record<string, Maker> = {
  'developerKeys.rotate': makeCredential,
  'developerKeys.revoke': makeCredential,
  'developerKeys.receipts': makeCredential,
  'developerKeys.update': async (server) => ({ ...(await makeCredential(server)), body: { limits: { requests_per_minute: 5 } } }),
  'developerKeys.usage': makeCredential,
  'developerKeys.setWebhook': async (server) => ({ ...(await makeCredential(server)), body: { url: WALK_WEBHOOK } }),
  'developerKeys.webhook': makeCredentialWithWebhook,
  'developerKeys.removeWebhook': makeCredentialWithWebhook,
  'requests.receipt': makeCatalogRequest,
  'jobs.get': makeFinishedJob,
  'jobs.result': makeFinishedJob,
  'jobs.cancel': makeCompletedJobToCancel,
  'responses.retrieve': makeStoredResponse,
  'responses.delete': makeStoredResponse,
  'responses.inputItems': makeStoredResponse,
  'responses.cancel': makeBackgroundResponse,
};
/** Routes with path params whose resources are not owned by a principal (say why). */
const NOT_OWNER_SCOPED: Record<string, string> = {
  'models.get': 'a model is configuration every caller with models:read sees alike (GET /v1/models lists the same items); it belongs to no principal',
};

async function makeCredential(server: TestServer) {
  const { session } = await signInAgent(server);
  const key = await createKey(server.client({ token: session.accessToken }), ['models:read']);
  return { owner: session.accessToken, params: { credential_id: key.credential.credential_id } };
}

/** A public address literal: the URL rules pass it with no lookup, and nothing is sent to it (no response is made with the key). */
const WALK_WEBHOOK = 'https://1.1.1.1/svc-walk';

async function makeCredentialWithWebhook(server: TestServer) {
  const made = await makeCredential(server);
  await server.client({ token: made.owner }).developerKeys.setWebhook({ params: { credential_id: made.params.credential_id }, body: { url: WALK_WEBHOOK } });
  return made;
}

async function makeCatalogRequest(server: TestServer) {
  const { session } = await signInAgent(server);
  const filed = await server
    .client({ token: session.accessToken })
    .requests.feature({ body: { capability: 'owner walk', task: 'other', use_case: 'owner-scoped probe' } });
  return { owner: session.accessToken, params: { request_id: filed.request_id } };
}

const calculation = { schema: 'svc.batch-job-request.v1' as const, operation: 'calculate' as const, items: [{ expression: '1 + 1' }] };

/** A completed job (its status and result answer 200 to the owner). */
async function makeFinishedJob(server: TestServer) {
  const { session, client } = await signInAgent(server);
  const job = await client.jobs.submit(calculation);
  await client.jobs.wait(job.job_id, { intervalMs: 20 });
  return { owner: session.accessToken, params: { job_id: job.job_id } };
}

/** A response stored by the built-in chat model (the Responses API stores by default). */
async function makeStoredResponse(server: TestServer) {
  const { session, client } = await signInAgent(server);
  const response = await client.responses.create({ body: { model: 'svc-extractive-chat', input: 'owner walk' } });
  return { owner: session.accessToken, params: { response_id: (response as { id: string }).id } };
}

/** A background response (only those can be cancelled): the owner's cancel answers it, cancelled or as it ended. */
async function makeBackgroundResponse(server: TestServer) {
  const { session, client } = await signInAgent(server);
  const response = await client.responses.create({ body: { model: 'svc-extractive-chat', input: 'owner walk', background: true } });
  return { owner: session.accessToken, params: { response_id: (response as { id: string }).id } };
}

/** A completed job: cancelling it answers the owner 409 `job_not_cancellable:completed` (found, not cancellable), anyone else 404. */
async function makeCompletedJobToCancel(server: TestServer) {
  return { ...(await makeFinishedJob(server)), ownerStatus: 409 };
}

test('every owner-scoped resource answers 404 to another principal, and the owner still reaches it', async (t) => {
  const { session: other } = await signInAgent(svc);
  const otherKey = (await createKey(svc.client({ token: other.accessToken }), [...allScopes])).secret;
  for (const [id, make] of Object.entries(OWNED_RESOURCES)) {
    const entry = routes.find((candidate) => candidate.id === id);
    if (!entry) {
      t.fail(`${id} is listed in OWNED_RESOURCES but is not in the contract`);
      continue;
    }
    const { owner, params, ownerStatus, body } = await make(svc);
    // The other principal presents whatever credential the route takes.
    const bearer = entry.route.auth.kind === 'bearer' ? other.accessToken : otherKey;
    const response = await call(entry.route, bearer, params, body);
    t.is(response.status, 404, `${id} as another principal`);
    const mine = await call(entry.route, owner, params, body);
    if (ownerStatus === undefined) t.true(mine.status < 400, `${id} as its owner answered ${mine.status}`);
    else t.is(mine.status, ownerStatus, `${id} as its owner`);
  }
});

test('every agent-served route with a path parameter is classified as owner-scoped or not', (t) => {
  const unclassified = routes
    .filter(({ route }) => servesAgents(route) && /[:*]/.test(route.path))
    .filter(({ id }) => !(id in OWNED_RESOURCES) && !(id in NOT_OWNER_SCOPED))
    .map(({ id, route }) => `${id} (${route.method} ${route.path})`);
  t.deepEqual(unclassified, [], 'add each to OWNED_RESOURCES (with a maker) or NOT_OWNER_SCOPED (with the reason) in identity-contract-walk.test.ts');
});

test('every route that is not public answers 401 with no credential and with an unknown one, with a challenge', async (t) => {
  const guarded = routes.filter(({ route }) => route.auth.kind !== 'public');
  t.true(guarded.length > 0);
  for (const { id, route } of guarded) {
    const root = route.surface === 'api' ? svc.apiUrl : svc.baseUrl;
    const filled = Object.fromEntries([...route.path.matchAll(/[:*]([A-Za-z0-9_]+)/g)].map((match) => [match[1]!, 'svc-walk-probe']));
    const anonymous = await fetch(`${root}${fillPath(route.path, filled)}`, { method: route.method, redirect: 'manual' });
    t.is(anonymous.status, 401, `${id} with no credential`);
    t.regex(anonymous.headers.get('www-authenticate') ?? '', /^Bearer /, `${id} names how to authenticate`);
    const unknown = await call(route, 'svc-walk-unknown-token');
    t.is(unknown.status, 401, `${id} with an unknown bearer`);
  }
});

test('every route served only to some principal kinds refuses the others: an agent never reaches an operator route', async (t) => {
  const { session } = await signInAgent(svc);
  const narrowed = routes.filter(
    ({ route }) => route.auth.kind !== 'public' && 'principals' in route.auth && route.auth.principals && !route.auth.principals.includes('agent'),
  );
  t.true(narrowed.some(({ id }) => id === 'system.metrics'));
  for (const { id, route } of narrowed) {
    const response = await call(route, session.accessToken);
    t.is(response.status, 403, `${id} as an agent`);
    t.is(((await response.json()) as { code: string }).code, 'principal_not_allowed', id);
  }
});
