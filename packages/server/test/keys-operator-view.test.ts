import test from 'ava';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { run } from '@svc/testing/run';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';

/**
 * The operator's view of developer keys (issue 45): every owner's keys with `everyone=true`, each
 * with its owner, expiry, last use and spent credits, searchable by `q`; a key past its expiry
 * stops working; and `svc keys list --everyone` prints them.
 */
const CLI_BIN = fileURLToPath(new URL('../../cli/src/bin.ts', import.meta.url));
let fake: FakeUpstream;
let svc: TestServer;
test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-fake', SVC_UPSTREAM_MODELS: 'answer-a', SVC_KEY_USAGE_FLUSH_MS: '50' },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const sequelize = () => svc.server.database.sequelize;
const scopes = ['models:read', 'inference:invoke', 'billing:read', 'billing:write'] as const;

test('the operator lists every owner’s keys with owner, last use and spend; an agent may not ask for everyone’s', async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const used = await alice.client.developerKeys.create({ body: { name: 'alice spender', scopes: [...scopes] } });
  const idle = await bob.client.developerKeys.create({ body: { name: 'bob idle', scopes: ['models:read'], expires_in_days: 30 } });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, alice.id, 10, `grant-${alice.id}`));
  const before = Date.now();
  const answer = await fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${used.secret}`, 'content-type': 'application/json', 'idempotency-key': 'spend-1' },
    body: JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content: 'a few words' }] }),
  });
  t.is(answer.status, 200);

  const everyone = await svc.operator.developerKeys.list({ query: { everyone: true, limit: 100 } });
  const spender = everyone.data.find((key) => key.credential_id === used.credential.credential_id)!;
  const bobs = everyone.data.find((key) => key.credential_id === idle.credential.credential_id)!;
  t.truthy(spender && bobs, "both owners' keys are in the operator's view");
  t.is(spender.owner, alice.id);
  t.is(bobs.owner, bob.id);
  t.true(spender.spent_credits > 0, `spent ${spender.spent_credits}`);
  t.true(Date.parse(spender.last_used_at!) >= before - 1000, `last used ${spender.last_used_at}`);
  t.is(bobs.last_used_at, null, 'never used');
  t.is(bobs.spent_credits, 0);
  const expires = Date.parse(bobs.expires_at!) - Date.parse(bobs.created_at);
  t.is(expires, 30 * 86_400_000, 'expires_in_days: 30 is 30 days after creation');
  t.is(spender.expires_at, null);

  // Without the flag the operator sees its own keys: none. An agent asking for everyone's is refused.
  t.deepEqual((await svc.operator.developerKeys.list()).data, []);
  const refused = await alice.client.developerKeys.list({ query: { everyone: true } }).catch((error: unknown) => error);
  t.is((refused as { status?: number }).status, 403);
  t.is((refused as { code?: string }).code, 'everyone_view_not_allowed');
  t.deepEqual(
    (await alice.client.developerKeys.list()).data.map((key) => key.credential_id),
    [used.credential.credential_id],
    "the owner's own list is unchanged",
  );
});

test('q searches name, id and owner, case aside; % and _ match themselves; longer than 100 characters is 422', async (t) => {
  const carol = await signInAgent(svc);
  const a = await carol.client.developerKeys.create({ body: { name: 'Deploy_Bot 100%', scopes: ['models:read'] } });
  const b = await carol.client.developerKeys.create({ body: { name: 'DeployXBot', scopes: ['models:read'] } });
  const ids = async (q: string) => (await svc.operator.developerKeys.list({ query: { everyone: true, q, limit: 100 } })).data.map((key) => key.credential_id);
  t.deepEqual(
    (await ids('deploy')).filter((id) => id === a.credential.credential_id || id === b.credential.credential_id).sort(),
    [a.credential.credential_id, b.credential.credential_id].sort(),
  );
  t.deepEqual(await ids('deploy_bot'), [a.credential.credential_id], '_ is not a wildcard');
  t.deepEqual(await ids('100%'), [a.credential.credential_id], '% is not a wildcard');
  t.deepEqual(await ids(b.credential.credential_id.toUpperCase()), [b.credential.credential_id], 'by id');
  t.true((await ids(carol.id)).length === 2, 'by owner');
  t.deepEqual(
    (await carol.client.developerKeys.list({ query: { q: 'xbot' } })).data.map((key) => key.credential_id),
    [b.credential.credential_id],
  );
  const long = await svc.operator.developerKeys.list({ query: { everyone: true, q: 'x'.repeat(101) } }).catch((error: unknown) => error);
  t.is((long as { status?: number }).status, 422);
  t.is((await svc.operator.developerKeys.list({ query: { everyone: true, q: 'x'.repeat(100) } })).data.length, 0, '100 characters are taken');
});

test('a key past its expiry is refused like an unknown key, cached or not', async (t) => {
  const dave = await signInAgent(svc);
  const key = await dave.client.developerKeys.create({ body: { name: 'short', scopes: ['models:read'], expires_in_days: 1 } });
  const models = () => fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
  t.is((await models()).status, 200, 'works before its expiry (and is now cached)');
  await sequelize().query("UPDATE svc_developer_keys SET expires_at = now() - interval '1 second' WHERE id = :id", {
    replacements: { id: key.credential.credential_id },
  });
  // The cached copy holds the old expiry until the cache forgets it; a direct write above is not a
  // change the service announces, so wait for the copy to be read again.
  await waitUntil('the expired key refused', async () => (await models()).status === 401);
  const rotated = await dave.client.developerKeys
    .create({ body: { name: 'too long', scopes: ['models:read'], expires_in_days: 1826 } })
    .catch((error: unknown) => error);
  t.is((rotated as { status?: number }).status, 422, 'at most 1825 days');
  t.is((await dave.client.developerKeys.create({ body: { name: 'longest', scopes: ['models:read'], expires_in_days: 1825 } })).credential.status, 'active');
});

test('svc keys list --everyone prints every owner’s keys with owner, last use and spend; --search filters', async (t) => {
  const erin = await signInAgent(svc);
  const key = await erin.client.developerKeys.create({ body: { name: 'erin cli key', scopes: ['models:read'] } });
  await waitUntil('listed', async () => (await svc.operator.developerKeys.list({ query: { everyone: true, q: 'erin cli' } })).data.length === 1);
  const cli = await run('pnpm', ['exec', 'node', CLI_BIN, 'keys', 'list', '--everyone', '--search', 'erin cli'], {
    cwd: process.cwd(),
    env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken },
    timeoutMs: 30_000,
  });
  t.is(cli.code, 0, cli.stderr);
  t.regex(cli.stdout, /OWNER/);
  t.regex(cli.stdout, /LAST USED/);
  t.true(cli.stdout.includes(key.credential.credential_id));
  t.true(cli.stdout.includes(erin.id));
  const refused = await run('pnpm', ['exec', 'node', CLI_BIN, 'keys', 'list', '--everyone'], {
    cwd: process.cwd(),
    env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: erin.session.accessToken },
    timeoutMs: 30_000,
  });
  t.not(refused.code, 0);
  t.regex(refused.stderr, /everyone_view_not_allowed/);
});
