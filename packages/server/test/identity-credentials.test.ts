import test from 'ava';
import { scopes as allScopes } from '@svc/schemas';
import { loadConfig } from '../src/index.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';

/** /v1/developer/credentials: create, list, rotate, revoke, receipts, and the keys at work. */
const DEMO_TOKEN = 'svc_demo_publishable_token';
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_DEVELOPER_KEYS_MAX_ACTIVE: '3', SVC_DEMO_TOKEN: DEMO_TOKEN } });
});
test.after.always(async () => {
  await svc?.close();
});

const statusOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status?: number }).status;
  }
};

test('the client calls developer keys by their user-facing name too: developerKeys and credentials are the same methods', async (t) => {
  const { client: agent } = await signInAgent(svc);
  t.is(agent.developerKeys, agent.credentials);
  const created = await agent.developerKeys.create({ body: { name: 'alias', scopes: ['models:read'] } });
  const listed = await agent.credentials.list({ query: { limit: 10 } });
  t.true(listed.data.some((key) => key.credential_id === created.credential.credential_id));
  await agent.developerKeys.revoke({ params: { credential_id: created.credential.credential_id } });
});

test('create answers the secret once, with no-store headers; the key works with its scopes only', async (t) => {
  const { client: agent, id } = await signInAgent(svc);
  const { data, response } = await agent.withResponse.credentials.create({ body: { name: 'ci', scopes: ['models:read'] } });
  t.is(response.status, 201);
  t.is(response.headers.get('cache-control'), 'no-store');
  t.is(response.headers.get('pragma'), 'no-cache');
  t.regex(data.secret, /^svc_dk_[0-9A-Za-z]{22}_[0-9A-Za-z]{38}$/);
  t.regex(data.credential.credential_id, /^dk_[0-9A-Za-z]{22}$/);
  t.true(data.secret.startsWith(data.credential.key_prefix));
  t.is(data.receipt.event, 'created');

  const keyClient = svc.client({ token: data.secret });
  const me = await keyClient.oauth.whoami();
  t.deepEqual(me, { kind: 'agent', id, scopes: ['models:read'], credential: 'developer_key', credential_id: data.credential.credential_id });
  t.truthy(await keyClient.models.list());

  const listed = await agent.withResponse.credentials.list();
  // Every answer to a credential is no-store (docs/reliability.md), not only those with a secret.
  t.is(listed.response.headers.get('cache-control'), 'no-store');
  t.false(JSON.stringify(listed.data).includes(data.secret.slice(-38)), 'the list never holds the secret');
  const receipts = await agent.credentials.receipts({ params: { credential_id: data.credential.credential_id } });
  t.false(JSON.stringify(receipts).includes(data.secret.slice(-38)), 'receipts never hold the secret');
});

test('create validates name and scopes, and refuses scopes the token does not hold', async (t) => {
  const { client: agent } = await signInAgent(svc, 'models:read jobs:read');
  t.is(await statusOf(agent.credentials.create({ body: { name: '', scopes: ['models:read'] } })), 422);
  t.is(await statusOf(agent.credentials.create({ body: { name: 'x'.repeat(101), scopes: ['models:read'] } })), 422);
  t.is(await statusOf(agent.credentials.create({ body: { name: 'x'.repeat(100), scopes: ['models:read'] } })), 200);
  t.is(await statusOf(agent.credentials.create({ body: { name: 'x', scopes: [] } })), 422);
  t.is(await statusOf(agent.credentials.create({ body: { name: 'x', scopes: ['models:read', 'models:read'] } })), 422);
  t.is(await statusOf(agent.credentials.create({ body: { name: 'x', scopes: ['nope:read' as 'models:read'] } })), 422);
  const error = await t.throwsAsync(agent.credentials.create({ body: { name: 'x', scopes: ['billing:write'] } }));
  t.is((error as { code?: string }).code, 'scope_not_held');
  t.is((error as { status?: number }).status, 403);
});

test('the active-key cap: the limit passes, one past it is 409; revoking frees a place', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const keys = [];
  for (let index = 0; index < 3; index++) keys.push(await createKey(agent, ['models:read'], `k${index}`));
  const error = await t.throwsAsync(createKey(agent, ['models:read']));
  t.is((error as { code?: string }).code, 'credential_limit_reached');
  t.is((error as { status?: number }).status, 409);
  await agent.credentials.revoke({ params: { credential_id: keys[0]!.credential.credential_id } });
  t.truthy(await createKey(agent, ['models:read']));
});

test('list pages by cursor newest first; limit bounds 1..100, default 50', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const made = [];
  for (let index = 0; index < 3; index++) {
    const key = await createKey(agent, ['models:read'], `page${index}`);
    made.push(key.credential.credential_id);
    await agent.credentials.revoke({ params: { credential_id: key.credential.credential_id } });
  }
  const first = await agent.credentials.list({ query: { limit: 2 } });
  t.deepEqual(
    first.data.map((key) => key.credential_id),
    [made[2], made[1]],
  );
  t.true(first.has_more);
  const second = await agent.credentials.list({ query: { limit: 2, cursor: first.next_cursor! } });
  t.deepEqual(
    second.data.map((key) => key.credential_id),
    [made[0]],
  );
  t.false(second.has_more);
  t.is(second.next_cursor, null);
  t.is((await agent.credentials.list()).data.length, 3);
  t.is(await statusOf(agent.credentials.list({ query: { limit: 100 } })), 200);
  t.is(await statusOf(agent.credentials.list({ query: { limit: 101 } })), 422);
  t.is(await statusOf(agent.credentials.list({ query: { limit: 0 } })), 422);
  t.is(await statusOf(agent.credentials.list({ query: { cursor: 'garbage' } })), 422);
  t.is(await statusOf(agent.credentials.list({ query: { cursor: 'x'.repeat(1025) } })), 422);
});

test('rotate: the old key is dead at once, the new one works, receipts link both', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const original = await createKey(agent, ['models:read', 'jobs:read']);
  const { data: rotated, response } = await agent.withResponse.credentials.rotate({ params: { credential_id: original.credential.credential_id } });
  t.is(response.headers.get('cache-control'), 'no-store');
  t.is(response.headers.get('pragma'), 'no-cache');
  t.not(rotated.secret, original.secret);
  t.deepEqual(rotated.credential.scopes, ['models:read', 'jobs:read']);
  t.is(rotated.credential.rotated_from, original.credential.credential_id);
  const old = await t.throwsAsync(svc.client({ token: original.secret }).models.list());
  t.is((old as { status?: number }).status, 401);
  t.is((old as { code?: string }).code, 'invalid_token');
  t.truthy(await svc.client({ token: rotated.secret }).models.list());
  const oldReceipts = await agent.credentials.receipts({ params: { credential_id: original.credential.credential_id } });
  t.deepEqual(
    oldReceipts.data.map((receipt) => receipt.event),
    ['created', 'rotated'],
  );
  t.is(oldReceipts.data[1]!.related_credential_id, rotated.credential.credential_id);
  const again = await t.throwsAsync(agent.credentials.rotate({ params: { credential_id: original.credential.credential_id } }));
  t.is((again as { code?: string }).code, 'credential_revoked');
  // Revoking a rotated key answers the receipt that ended it.
  const revoke = await agent.credentials.revoke({ params: { credential_id: original.credential.credential_id } });
  t.is(revoke.status, 'rotated');
  t.deepEqual(revoke.receipt, oldReceipts.data[1]);
});

test('revoke is immediate and idempotent: a repeated revoke returns the same receipt', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['models:read']);
  const keyClient = svc.client({ token: key.secret });
  t.truthy(await keyClient.models.list());
  const first = await agent.credentials.revoke({ params: { credential_id: key.credential.credential_id } });
  t.is(first.status, 'revoked');
  t.is(first.receipt.event, 'revoked');
  t.is(await statusOf(keyClient.models.list()), 401);
  const second = await agent.credentials.revoke({ params: { credential_id: key.credential.credential_id } });
  t.deepEqual(second, first);
  const receipts = await agent.credentials.receipts({ params: { credential_id: key.credential.credential_id } });
  t.deepEqual(
    receipts.data.map((receipt) => receipt.event),
    ['created', 'revoked'],
  );
});

test('receipts page by cursor, oldest first, and are append-only in the database', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['models:read']);
  await agent.credentials.revoke({ params: { credential_id: key.credential.credential_id } });
  const first = await agent.credentials.receipts({ params: { credential_id: key.credential.credential_id }, query: { limit: 1 } });
  t.is(first.data[0]!.event, 'created');
  t.true(first.has_more);
  const second = await agent.credentials.receipts({ params: { credential_id: key.credential.credential_id }, query: { limit: 1, cursor: first.next_cursor! } });
  t.is(second.data[0]!.event, 'revoked');
  t.false(second.has_more);
  await t.throwsAsync(svc.server.database.sequelize.query('UPDATE svc_developer_key_receipts SET name = :name', { replacements: { name: 'changed' } }), {
    message: /append-only/,
  });
  await t.throwsAsync(svc.server.database.sequelize.query('DELETE FROM svc_developer_key_receipts'), { message: /append-only/ });
});

test('another principal sees none of my keys and gets 404 for their ids', async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const key = await createKey(alice.client, ['models:read']);
  const id = { params: { credential_id: key.credential.credential_id } };
  t.false((await bob.client.credentials.list()).data.some((item) => item.credential_id === key.credential.credential_id));
  for (const call of [bob.client.credentials.rotate(id), bob.client.credentials.revoke(id), bob.client.credentials.receipts(id)]) {
    const error = await t.throwsAsync(call);
    t.is((error as { status?: number }).status, 404);
    t.is((error as { code?: string }).code, 'credential_not_found');
  }
  t.truthy(await svc.client({ token: key.secret }).models.list(), "bob's attempts changed nothing");
});

test('credential endpoints take an OAuth bearer only: not a developer key, not the operator (except its list and limits), not anonymous', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, [...allScopes]);
  const withKey = await t.throwsAsync(svc.client({ token: key.secret }).credentials.list());
  t.is((withKey as { code?: string }).code, 'developer_key_not_accepted');
  const operator = await t.throwsAsync(svc.operator.developerKeys.create({ body: { name: 'op', scopes: ['models:read'] } }));
  t.is((operator as { code?: string }).code, 'principal_not_allowed');
  t.deepEqual((await svc.operator.developerKeys.list()).data, [], 'the operator owns no key: without everyone=true its list is empty');
  t.is(await statusOf(svc.client().credentials.list()), 401);
});

test('the publishable demo credential is the shared demo principal: demo scopes only, no keys', async (t) => {
  const demo = svc.client({ token: DEMO_TOKEN });
  t.deepEqual(await demo.oauth.whoami(), { kind: 'demo', id: 'demo', scopes: ['models:read', 'inference:invoke'], credential: 'demo_token' });
  t.truthy(await demo.models.list());
  const error = await t.throwsAsync(demo.credentials.create({ body: { name: 'x', scopes: ['models:read'] } }));
  t.is((error as { code?: string }).code, 'principal_not_allowed');
  t.throws(() => loadConfig({ SVC_DEMO_SCOPES: 'models:read root' }), { message: /SVC_DEMO_SCOPES/ });
  const short = 'short-signing-secret-31-chars!!';
  t.is(short.length, 31);
  const configError = t.throws(() => loadConfig({ SVC_SIGNING_SECRET: short }), {
    message: /SVC_SIGNING_SECRET=\(31 characters, not shown\): must be at least 32 characters/,
  });
  t.false(configError!.message.includes(short), 'a bad secret is never echoed');
  t.notThrows(() => loadConfig({ SVC_SIGNING_SECRET: `${short}!` }), '32 characters pass');
});
