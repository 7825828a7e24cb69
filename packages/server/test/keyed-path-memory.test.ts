import test from 'ava';
import { QueryTypes } from 'sequelize';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { freePort } from '@svc/testing/free-port';
import { signInAgent } from '@svc/testing/identity';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/observability/logger.ts';

/**
 * The keyed path in memory (docs/identity.md, "Credential cache"; docs/limits.md, "Usage
 * counters"): a verified developer key or access token is kept in memory, a change made on one
 * replica reaches the other within the stated bound (under 1 s: a PostgreSQL notification, the
 * cache's TTL behind it), and a key's call counters are written in batches, all of them on a
 * graceful stop. Against PostgreSQL (TEST_DATABASE_URL) `a` and `b` are two replicas of one
 * database; the embedded database cannot be shared, so there `b` is `a`.
 */
const BOUND_MS = 1000;
const TTL_MS = 750;
const FLUSH_CALLS = 4;
let database: TestDatabase;
let fake: FakeUpstream;
let a: TestServer;
let b: TestServer;
let batching: TestServer;

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream();
  const env = {
    SVC_SIGNING_SECRET: 'keyed-path-memory-secret-0123456789-abcdef',
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_API_KEY: 'sk-fake',
    SVC_UPSTREAM_MODELS: 'answer-a',
    SVC_CREDENTIAL_CACHE_TTL_MS: String(TTL_MS),
  };
  // Replicas behind one load balancer share the public URL (the issuer of their tokens).
  const [portA, portB] = [await freePort(), await freePort()];
  const replicas = { ...env, SVC_PUBLIC_URL: `http://127.0.0.1:${portA}` };
  a = await startTestServer({ database, env: { ...replicas, SVC_PORT: String(portA) } });
  b = database.kind === 'postgres' ? await startTestServer({ database, env: { ...replicas, SVC_PORT: String(portB) } }) : a;
  // Its own database: it is stopped by a test, and its counters wait for a minute or FLUSH_CALLS calls.
  batching = await startTestServer({ env: { ...env, SVC_KEY_USAGE_FLUSH_MS: '60000', SVC_KEY_USAGE_FLUSH_CALLS: String(FLUSH_CALLS) } });
});
test.after.always(async () => {
  await batching?.close().catch(() => {});
  if (b !== a) await b?.close();
  await a?.close();
  await fake?.close();
  await database?.drop();
});

const whoami = async (server: TestServer, token: string) =>
  (await fetch(`${server.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status;

async function newKey(server: TestServer) {
  const agent = await signInAgent(server);
  const created = await agent.client.credentials.create({ body: { name: 'memory', scopes: ['models:read', 'inference:invoke'] } });
  return { agent, credentialId: created.credential.credential_id, secret: created.secret };
}

/** How long until `server` refuses `token` (401), polled every few milliseconds, or undefined past twice the bound. */
async function untilRefused(server: TestServer, token: string): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < 2 * BOUND_MS) {
    if ((await whoami(server, token)) === 401) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return undefined;
}

test.serial('a verified key is served from memory: a row changed behind the service is not read again until the TTL ends', async (t) => {
  const { credentialId, secret } = await newKey(a);
  t.is(await whoami(a, secret), 200);
  // Not through the service: no notification, so only the TTL can end the cached copy.
  await a.server.database.sequelize.query("UPDATE svc_developer_keys SET secret_hash = repeat('0', 64) WHERE id = :id", {
    replacements: { id: credentialId },
  });
  const changedAt = performance.now();
  t.is(await whoami(a, secret), 200, 'the next call is answered from memory');
  const refusedAfter = await untilRefused(a, secret);
  t.truthy(refusedAfter !== undefined && performance.now() - changedAt <= BOUND_MS, `refused ${Math.round(performance.now() - changedAt)} ms after the change`);
});

// Only PostgreSQL has a listening connection to lose (the embedded database's one replica hears its own changes).
if (process.env.TEST_DATABASE_URL)
  test.serial('a replica whose listening connection was lost trusts no cached key: a change made meanwhile is seen at once', async (t) => {
    const { credentialId, secret } = await newKey(a);
    t.is(await whoami(a, secret), 200);
    const sequelize = a.server.database.sequelize;
    const [ended] = await sequelize.query<{ count: number }>(
      "SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity WHERE application_name = 'svc-listen' AND datname = current_database()",
      { type: QueryTypes.SELECT },
    );
    t.true(ended!.count >= 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Not announced: only a cache that stopped trusting itself (or was emptied on reconnecting) sees it.
    await sequelize.query("UPDATE svc_developer_keys SET secret_hash = repeat('0', 64) WHERE id = :id", { replacements: { id: credentialId } });
    t.is(await whoami(a, secret), 401);
    await waitUntil('both replicas listening again', async () => {
      const [back] = await sequelize.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name = 'svc-listen' AND datname = current_database()",
        { type: QueryTypes.SELECT },
      );
      return back!.count >= 2 ? true : undefined;
    });
  });

test.serial('a key revoked on one replica is refused on the other within the bound', async (t) => {
  const { agent, credentialId, secret } = await newKey(a);
  t.is(await whoami(b, secret), 200, 'the other replica has verified (and keeps) the key');
  t.is(await whoami(b, secret), 200);
  await agent.client.credentials.revoke({ params: { credential_id: credentialId } });
  const after = await untilRefused(b, secret);
  t.log(`refused on the other replica ${after === undefined ? 'never' : `${after.toFixed(1)} ms`} after the revoke answered (${database.kind})`);
  t.truthy(after !== undefined && after < BOUND_MS);
});

test.serial('a rotated key is refused on the other replica within the bound, and its successor served', async (t) => {
  const { agent, credentialId, secret } = await newKey(a);
  t.is(await whoami(b, secret), 200);
  const rotated = await agent.client.credentials.rotate({ params: { credential_id: credentialId } });
  const after = await untilRefused(b, secret);
  t.truthy(after !== undefined && after < BOUND_MS);
  t.is(await whoami(b, rotated.secret), 200);
});

test.serial('a key limit changed on one replica holds on the other within the bound', async (t) => {
  const { agent, credentialId, secret } = await newKey(a);
  const limitOnB = async () => {
    const response = await fetch(`${b.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    await response.arrayBuffer();
    t.is(response.status, 200);
    return response.headers.get('x-ratelimit-limit-requests');
  };
  t.is(await limitOnB(), null, 'no limit yet, and the key is kept in memory');
  await agent.client.credentials.update({ params: { credential_id: credentialId }, body: { limits: { requests_per_minute: 1000 } } });
  const started = performance.now();
  while ((await limitOnB()) !== '1000' && performance.now() - started < 2 * BOUND_MS) await new Promise((resolve) => setTimeout(resolve, 5));
  const after = performance.now() - started;
  t.log(`the new limit held on the other replica ${after.toFixed(1)} ms after the change answered (${database.kind})`);
  t.true(after < BOUND_MS);
});

test.serial('an access token revoked on one replica is refused on the other within the bound', async (t) => {
  const agent = await signInAgent(a);
  const token = agent.session.accessToken;
  t.is(await whoami(b, token), 200);
  t.is(await whoami(b, token), 200);
  const revoked = await fetch(`${a.baseUrl}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  t.is(revoked.status, 200);
  const after = await untilRefused(b, token);
  t.log(`refused on the other replica ${after === undefined ? 'never' : `${after.toFixed(1)} ms`} after the revoke answered (${database.kind})`);
  t.truthy(after !== undefined && after < BOUND_MS);
});

const storedRequests = async (credentialId: string) => {
  const [row] = await batching.server.database.sequelize.query<{ requests: string | null }>(
    'SELECT sum(requests) AS requests FROM svc_developer_key_usage WHERE credential_id = :credentialId',
    { replacements: { credentialId }, type: QueryTypes.SELECT },
  );
  return Number(row?.requests ?? 0);
};

const chat = (secret: string) =>
  fetch(`${batching.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content: 'hello there' }] }),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });

test.serial('usage counters are written per batch of calls, and all of them on a graceful stop', async (t) => {
  const { credentialId, secret } = await newKey(batching);
  for (let call = 0; call < FLUSH_CALLS - 1; call++) t.is(await chat(secret), 200);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(await storedRequests(credentialId), 0, 'one call short of the batch: nothing written yet');
  t.is(await chat(secret), 200);
  await waitUntil('the batch written at its size', async () => ((await storedRequests(credentialId)) === FLUSH_CALLS ? true : undefined));
  for (let call = 0; call < 2; call++) t.is(await chat(secret), 200);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(await storedRequests(credentialId), FLUSH_CALLS, 'the next calls wait for the next batch');
  await batching.server.close();
  // The embedded database closed with the server: opened again from its directory to read what was written.
  const reopened = await openDatabase({
    databaseUrl: batching.database.databaseUrl,
    dataDir: batching.database.dataDir,
    poolMax: 1,
    log: createLogger('silent'),
  });
  try {
    const [row] = await reopened.sequelize.query<{ requests: string }>(
      'SELECT sum(requests) AS requests FROM svc_developer_key_usage WHERE credential_id = :credentialId',
      { replacements: { credentialId }, type: QueryTypes.SELECT },
    );
    t.is(Number(row!.requests), FLUSH_CALLS + 2, 'a graceful stop writes every pending counter');
  } finally {
    await reopened.close();
  }
});
